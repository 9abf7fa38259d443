#include "core/reconcile/reconcile_run.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <limits>

#include "core/reconcile/key_diff.h"
#include "core/run/input_horizon.h"
#include "core/run/run_lifecycle.h"
#include "core/run/run_step.h"
#include "core/sql/column_shape.h"

namespace tidemark {
namespace {

// Drops from `keys` those `side` holds now, matched by value (KeySide::held_now).
Status drop_held(KeySide& side, std::vector<KeyRow>& keys) {
  if (keys.empty()) return ok_status();
  const auto held = side.held_now(keys);
  if (!held) return held.failure();
  std::vector<bool> drop(keys.size(), false);
  for (const std::size_t i : *held) {
    if (i < drop.size()) drop[i] = true;
  }
  std::vector<KeyRow> kept;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!drop[i]) kept.push_back(std::move(keys[i]));
  }
  keys = std::move(kept);
  return ok_status();
}

void keep_examples(const std::vector<KeyRow>& rows, std::size_t most, std::vector<std::string>& into) {
  for (const KeyRow& r : rows) {
    if (into.size() >= most) return;
    into.push_back(r.text);
  }
}

}  // namespace

std::string reconcile_mark_column(const TableConfig& table) {
  if (!table.deletes || table.deletes->action != DeleteAction::Mark) return {};
  return table.deletes->mark_column;
}

ReconcileReport ReconcileRun::execute(const ReconcileRequest& request) {
  if (run_.table.mode != TableMode::Incremental) std::abort();
  ReconcileReport report;
  // The lifecycle reports to an observer; a reconcile's go to its caller.
  RunObserver unheard;
  // A dry run writes nothing: the lock alone, the watermark read under it.
  RunLifecycle run(run_.state, run_.ownership, unheard, RunLock{run_.key(), std::nullopt}, request.trigger,
                   request.dry_run ? RunRow::None : RunRow::Kept);
  const auto reconciled = [&]() -> Status {
    if (!run.open(request.wait_for_lock)) return ok_status();
    RunSummary& summary = run.summary();
    if (request.dry_run) {
      const auto stored = run_.state.read_watermark(run_.key());
      if (!stored) return stored.failure();
      if (*stored) summary.watermark_before = (*stored)->value;
      summary.watermark_after = summary.watermark_before;
    }
    const Status outcome = reconcile_locked(request, summary.watermark_before, summary.run, report);
    summary.reconcile = report.counts;
    summary.rows_read = report.copied.rows_read;
    summary.rows_written = report.copied.rows_written;
    return outcome;
  };
  const Status outcome = reconciled();
  report.run = run.finish(outcome, run_.cancel.cancelled());
  return report;
}

Status ReconcileRun::reconcile_locked(const ReconcileRequest& request, const std::optional<CursorValue>& watermark,
                                      RunId run, ReconcileReport& report) {
  // The source first: a reconcile that cannot read it has failed, even
  // when it would find nothing to compare.
  const auto source_table = run_.source.inspect(run_.table);
  if (!source_table) return source_table.failure();
  if (!watermark) {
    // Nothing is claimed yet, and deletions are only looked for among
    // rows a load wrote: a first load comes first.
    report.no_watermark = true;
    return ok_status();
  }
  const CursorValue& w = *watermark;
  source_table_ = *source_table;
  if (source_table->cursor_type != w.type) {
    return permanent_error("the stored watermark is a " + std::string(cursor_type_name(w.type)) + " but cursor " +
                           run_.table.cursor + " is a " + std::string(cursor_type_name(source_table->cursor_type)));
  }
  const auto target = run_.target.check(run_.table);
  if (!target) return target.failure();
  if (!target->exists) {
    return permanent_error("target table " + run_.table.target_table.display() +
                           " does not exist yet: its first run creates it (create_target)");
  }
  // Rows are copied again as the target holds them: a source column the
  // target lacks (schema drift) is the load's to report, not this copy's,
  // and one it generates is its own.
  std::vector<std::string> copied;
  for (const std::string& c : source_table_.columns) {
    const auto has = [&](const ColumnShape& t) { return t.name == c && t.fill != ColumnFill::Generated; };
    if (std::any_of(target->columns.begin(), target->columns.end(), has)) copied.push_back(c);
  }
  if (!target->columns.empty()) source_table_.columns = copied;
  // Each row is compared by the columns it was loaded from; one whose type
  // differs between the sides prints differently although its value is
  // the same (timestamp and timestamptz), so it is named, not compared.
  KeyCompare compare{*watermark, {}};
  for (const std::string& c : source_table_.columns) {
    const ColumnShape* in_source = find_column(source_table_.catalog, c);
    const ColumnShape* in_target = find_column(target->columns, c);
    if (in_source != nullptr && in_target != nullptr && in_source->type != in_target->type) {
      report.uncompared.push_back(c);
      continue;
    }
    compare.columns.push_back(FingerprintColumn{c, in_source ? in_source->type : "", in_target ? in_target->type : ""});
  }
  // Its copies go through the load's upsert, and its deletes find keys
  // as the load wrote them: the target must take what a load does.
  const SourceKeys source_keys{source_table_.catalog, source_table_.unique_indexes, source_table_.kind};
  if (const auto refusal = refuse_target(run_.table, source_keys, *target,
                                         source_table_.columns)) {
    return permanent_error(*refusal);
  }

  const auto source_estimate = source_keys_.estimate_rows();
  if (!source_estimate) return source_estimate.failure();
  const auto target_estimate = target_keys_.estimate_rows();
  if (!target_estimate) return target_estimate.failure();
  std::int64_t buckets = bucket_count(std::max(*source_estimate, *target_estimate));

  std::vector<BucketDifference> differing;
  bool source_below_empty = false;  // no source row below the watermark
  for (int attempt = 0; attempt < 2; ++attempt) {
    // Both sides count at once.
    if (const Status sent = source_keys_.send_bucket_sums(buckets, compare); !sent) return sent;
    if (const Status sent = target_keys_.send_bucket_sums(buckets, compare); !sent) {
      (void)source_keys_.bucket_sums();  // collected, and dropped: the target cannot count
      return sent;
    }
    const auto from_source = source_keys_.bucket_sums();
    const auto from_target = target_keys_.bucket_sums();
    if (!from_source) return from_source.failure();
    if (!from_target) return from_target.failure();
    differing = differing_buckets(*from_source, *from_target);
    source_below_empty = total_rows(*from_source, {}) == 0;
    // Statistics far below the real size make buckets too large to fetch
    // in a batch: count again once, with buckets sized from the counts.
    const std::int64_t rows = total_rows(*from_source, *from_target);
    if (attempt == 1 || !needs_more_buckets(differing, buckets, rows)) break;
    buckets = bucket_count(rows);
  }
  report.buckets = buckets;
  report.differing_buckets = static_cast<std::int64_t>(differing.size());

  if (differing.empty()) return ok_status();
  std::vector<std::int64_t> which;
  for (const BucketDifference& d : differing) which.push_back(d.bucket);
  // One pass a side: both listings are opened once and read in pieces, in
  // step, by bucket; a piece is merged and committed once every bucket in
  // it is complete on both sides.
  // Both listings are computed at once.
  if (const Status sent = source_keys_.send_open_keys(buckets, which, compare); !sent) return sent;
  if (const Status sent = target_keys_.send_open_keys(buckets, which, compare); !sent) {
    (void)source_keys_.open_keys();
    source_keys_.close_keys();
    return sent;
  }
  const Status source_opened = source_keys_.open_keys();
  const Status target_opened = target_keys_.open_keys();
  if (!source_opened || !target_opened) {
    source_keys_.close_keys();
    target_keys_.close_keys();
    return !source_opened ? source_opened : target_opened;
  }
  const Status merged = merge_listings(request, w, run, source_below_empty, report);
  source_keys_.close_keys();
  target_keys_.close_keys();
  return merged;
}

Status ReconcileRun::merge_listings(const ReconcileRequest& request, const CursorValue& w, RunId run,
                                    bool source_below_empty, ReconcileReport& report) {
  struct Listing {
    KeySide& side;
    std::vector<KeyRow> rows;
    bool done = false;
  };
  Listing source{source_keys_, {}, false};
  Listing target{target_keys_, {}, false};
  std::size_t piece = static_cast<std::size_t>(std::max<std::int64_t>(2, request.batch_keys / 2));
  const auto fill = [&](Listing& l) -> Status {
    if (l.done || l.rows.size() >= piece) return ok_status();
    const std::size_t want = piece - l.rows.size();
    auto more = l.side.next_keys(want);
    if (!more) return more.failure();
    report.keys_fetched += static_cast<std::int64_t>(more->size());
    if (more->size() < want) l.done = true;
    l.rows.insert(l.rows.end(), std::make_move_iterator(more->begin()), std::make_move_iterator(more->end()));
    return ok_status();
  };
  // Rows of buckets below the last one read from a listing still going are
  // complete on that side; a finished listing is complete throughout.
  const auto complete_below = [](const Listing& l) {
    return l.done || l.rows.empty() ? std::numeric_limits<std::int64_t>::max() : l.rows.back().bucket;
  };
  const auto take_below = [](Listing& l, std::int64_t limit) {
    const auto end = std::find_if(l.rows.begin(), l.rows.end(), [&](const KeyRow& r) { return r.bucket >= limit; });
    std::vector<KeyRow> out(std::make_move_iterator(l.rows.begin()), std::make_move_iterator(end));
    l.rows.erase(l.rows.begin(), end);
    return out;
  };
  const std::string mark_column = reconcile_mark_column(run_.table);
  for (bool first = true;; first = false) {
    if (run_.cancel.cancelled()) return Error{run_.cancel.reason()};
    if (const Status filled = fill(source); !filled) return filled;
    if (const Status filled = fill(target); !filled) return filled;
    // No source row below the watermark means every bucket the target
    // holds a row in differs, and equal buckets are empty on both sides;
    // a source listing of those buckets that is empty too means the
    // source table holds no row at all. A source emptied or swapped by
    // mistake (a wrong DSN, a restore in progress) is far likelier than
    // one emptied on purpose, and deleting every target row is the one
    // step reconcile cannot take back: refuse, before anything commits.
    if (first && source_below_empty && source.done && source.rows.empty() && !target.rows.empty()) {
      return permanent_error("source table " + run_.table.source_table->display() + " holds no row, but target table " +
                             run_.table.target_table.display() +
                             " does: a reconcile would delete every target row, so it refuses; if the source was "
                             "emptied on purpose, empty the target by hand");
    }
    const std::int64_t limit = std::min(complete_below(source), complete_below(target));
    const std::vector<KeyRow> from_source = take_below(source, limit);
    const std::vector<KeyRow> from_target = take_below(target, limit);
    if (from_source.empty() && from_target.empty()) {
      if (source.done && target.done) return ok_status();
      piece *= 2;  // one bucket fills a whole piece: read further before merging
      continue;
    }
    ++report.batches;
    KeyDiff diff = diff_keys(from_source, from_target);
    // The source's listing is as old as the reconcile; a key deleted and
    // written again since (a delete and insert, a restore) is in the
    // source now, and deleting its row would break the watermark's claim
    // for a row whose cursor may never move again. Ask the source afresh,
    // just before the delete, and keep those rows.
    if (const Status asked = drop_held(source_keys_, diff.gone); !asked) return asked;
    // A key the target holds, only printed differently there (a timestamp
    // key loaded into timestamptz), is not missing: asked by value, such
    // keys are neither copied again nor counted (nor alerted on).
    if (const Status asked = drop_held(target_keys_, diff.missing); !asked) return asked;
    keep_examples(diff.gone, request.examples, report.deleted_examples);
    keep_examples(diff.missing, request.examples, report.missing_examples);
    keep_examples(diff.changed, request.examples, report.changed_examples);
    const ReconcileCounts found{static_cast<std::int64_t>(diff.gone.size()),
                                static_cast<std::int64_t>(diff.missing.size()),
                                static_cast<std::int64_t>(diff.changed.size())};
    if (request.dry_run) {
      report.counts.deleted += found.deleted;
      report.counts.missing += found.missing;
      report.counts.changed += found.changed;
      report.restored += static_cast<std::int64_t>(diff.restored.size());
      continue;
    }
    if (diff.gone.empty() && diff.missing.empty() && diff.changed.empty() && diff.restored.empty()) continue;
    ReconcileFix fix;
    fix.gone = diff.gone;
    fix.recopy = diff.missing;
    fix.recopy.insert(fix.recopy.end(), diff.changed.begin(), diff.changed.end());
    fix.recopy.insert(fix.recopy.end(), diff.restored.begin(), diff.restored.end());
    std::sort(fix.recopy.begin(), fix.recopy.end());
    fix.mark_column = mark_column;
    fix.watermark = w;
    StepRecord record;
    record.lock = RunLock{run_.key(), std::nullopt};
    record.run = run;
    record.reconcile = ReconcileCounts{0, found.missing, found.changed};
    const auto written = commit_reconcile(
        run_.target, run_.table, source_table_, fix, record, [&](const ReconcileWrite& repaired) {
          // Rows changed below the dependents' done partitions: those
          // partitions are checked again.
          const bool changed = repaired.deleted > 0 || repaired.copied.rows_written > 0;
          return changed ? downstream_recheck(run_.pipeline, run_.table, kCalendarStart, "repaired by reconcile")
                         : std::nullopt;
        });
    if (!written) return written.failure();
    report.counts.deleted += written->deleted;
    report.copied.rows_read += written->copied.rows_read;
    report.copied.rows_written += written->copied.rows_written;
    report.counts.missing += found.missing;
    report.counts.changed += found.changed;
    report.restored += static_cast<std::int64_t>(diff.restored.size());
  }
}

}  // namespace tidemark
