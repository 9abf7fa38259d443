#include "core/schedule/run_queue.h"

#include <cstdlib>

namespace tidemark {

RunQueue::RunQueue(std::size_t workers) : workers_(workers) {
  if (workers_ == 0) std::abort();  // a queue nothing ever drains
}

RunQueue::Offer RunQueue::offer(const Firing& firing) {
  const JobKey key{firing.table, firing.kind};
  if (running_.count(key) || waiting_.count(key)) return Offer::Overrun;
  if (members_.size() < workers_) {
    const std::uint64_t worker = workers_started_++;
    running_.emplace(key, worker);
    members_[worker] = 1;
    return Offer::Start;
  }
  wait(firing);
  return Offer::Queued;
}

void RunQueue::wait(const Firing& firing) {
  const JobKey key{firing.table, firing.kind};
  const Order order{firing.scheduled, arrivals_++, key};
  by_order_.insert(order);
  waiting_.emplace(key, std::make_pair(order, firing));
}

std::optional<Firing> RunQueue::finished(const TableKey& table, JobKind kind) {
  const auto run = running_.find(JobKey{table, kind});
  if (run == running_.end()) std::abort();  // finished a run that never started
  const auto worker = members_.find(run->second);
  running_.erase(run);
  if (--worker->second > 0) return std::nullopt;  // its worker still runs others of its batch
  members_.erase(worker);
  if (by_order_.empty()) return std::nullopt;
  const Order next = *by_order_.begin();
  by_order_.erase(by_order_.begin());
  const auto it = waiting_.find(std::get<2>(next));
  Firing firing = it->second.second;
  waiting_.erase(it);
  const std::uint64_t turn = workers_started_++;
  running_.emplace(JobKey{firing.table, firing.kind}, turn);
  members_[turn] = 1;
  return firing;
}

std::vector<Firing> RunQueue::take_along(const JobKey& lead, const std::function<bool(const Firing&)>& along,
                                         std::size_t limit) {
  const auto led = running_.find(lead);
  if (led == running_.end()) std::abort();  // a batch needs its first firing running
  std::vector<Firing> taken;
  for (auto order = by_order_.begin(); order != by_order_.end() && taken.size() < limit;) {
    const auto it = waiting_.find(std::get<2>(*order));
    if (!along(it->second.second)) {
      ++order;
      continue;
    }
    taken.push_back(it->second.second);
    running_.emplace(it->first, led->second);
    ++members_.at(led->second);
    waiting_.erase(it);
    order = by_order_.erase(order);
  }
  return taken;
}

std::optional<Firing> RunQueue::wait_again(const Firing& firing) {
  Firing alone = firing;
  alone.alone = true;
  // Waiting before its worker is handed on, so that the oldest firing,
  // which it may well be, gets that worker.
  const JobKey key{firing.table, firing.kind};
  if (running_.count(key) == 0) std::abort();
  wait(alone);
  return finished(firing.table, firing.kind);
}

bool RunQueue::remove(const TableKey& table, JobKind kind) {
  const auto it = waiting_.find(JobKey{table, kind});
  if (it == waiting_.end()) return false;
  by_order_.erase(it->second.first);
  waiting_.erase(it);
  return true;
}

std::vector<Firing> RunQueue::clear() {
  std::vector<Firing> dropped;
  for (const Order& order : by_order_) dropped.push_back(waiting_.at(std::get<2>(order)).second);
  by_order_.clear();
  waiting_.clear();
  return dropped;
}

}  // namespace tidemark
