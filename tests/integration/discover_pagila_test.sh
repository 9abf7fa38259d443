#!/usr/bin/env bash
# From an empty warehouse to every table loading, on a schema tidemark did
# not write: pagila (tests/integration/samples/pagila: enums, domains,
# arrays, tsvector, bytea, a partitioned payment table) and, beside it, a
# schema with what pagila lacks (an extension type, a generated column,
# contrib's moddatetime, a table with no cursor, tables without a key: one
# an identity numbers, appended, and one with nothing to append by, a
# snapshot without key). tidemark discover writes
# the pipeline files, validate accepts them as written, and the first run
# creates every target table in an empty database (create_target). Then
# a round of application updates and a second run: every table must equal
# its source row for row, both times.
# Usage: discover_pagila_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tidemark=$1
sample=$(cd "$(dirname "$0")/samples/pagila" && pwd)
test_setup discover_pagila

source_db=${db}_source
target_db=${db}_target
psql_source() { psql -X -q -v ON_ERROR_STOP=1 -d "$source_db" "$@"; }
for file in pagila-schema.sql pagila-data.sql; do
  sed -E '/^ALTER .* OWNER TO postgres;$/d' "$sample/$file" | psql_source -1 -f - >/dev/null
done
psql_source -c "
  create extension hstore;
  create extension moddatetime;
  create schema extras;
  create table extras.tagged (
    id serial primary key, tags hstore, price numeric(10,2) not null,
    price_with_tax numeric(12,2) generated always as (price * 1.2) stored,
    updated_at timestamptz not null default now());
  create trigger tagged_stamp before update on extras.tagged
    for each row execute function moddatetime(updated_at);
  create table extras.settings (key text primary key, value text);
  create table extras.audit_lines (line text);
  create table extras.page_views (id bigint generated always as identity, path text not null);
  insert into extras.tagged (tags, price) values ('color=>red', 10), ('size=>L', 20.5);
  insert into extras.audit_lines values ('started'), ('started'), ('checked');
  insert into extras.page_views (path) values ('/'), ('/films');
  insert into extras.settings values ('mode', 'live'), ('limit', '10');
  analyze"
# The extension type the source uses is the target's to install: tidemark
# creates enums, domains and composite types, not extensions.
psql -X -q -d "$target_db" -c "create extension hstore"

daemon_config info
"$tidemark" discover --config "$work/tidemark.yaml" --source source --target target \
  --write "$work/pipelines" >"$work/discover.out" 2>&1
counted() {
  grep -q "19 tables found in 2 schemas: 15 incremental (0 of them insert-only), 1 append, 3 snapshot, 0 left out" \
    "$work/discover.out"
}
check "discover finds every table, partitions once, and counts them" counted
check "discover writes one file per schema" test -f "$work/pipelines/source_public.yaml" -a \
  -f "$work/pipelines/source_extras.yaml"
check "validate accepts what discover wrote, as written" \
  "$tidemark" validate --config "$work/tidemark.yaml" >"$work/validate.out" 2>&1
will_create() { [ "$(grep -c 'the first run creates it (create_target)' "$work/validate.out")" = 19 ]; }
check "validate says each target will be created" will_create
written_as() {  # written_as TEXT: source_extras.yaml holds TEXT, lines joined by |
  tr '\n' '|' <"$work/pipelines/source_extras.yaml" | grep -qF "$1"
}
check "discover appends the keyless table an identity numbers" \
  written_as "  - name: page_views|    mode: append|    source_table: extras.page_views|    target_table: extras.page_views|    cursor: id|"
check "discover makes the keyless table without a cursor a snapshot without key" \
  written_as "  - name: audit_lines|    mode: snapshot|    source_table: extras.audit_lines|    target_table: extras.audit_lines||"

# Every table of both schemas, as its rows' text, hashed.
tables="public.actor public.address public.category public.city public.country public.customer public.film
        public.film_actor public.film_category public.inventory public.language public.payment public.rental
        public.staff public.store extras.tagged extras.settings extras.audit_lines extras.page_views"
fingerprint() {
  local t
  for t in $tables; do
    psql -X -At -d "$1" -c "select '$t', count(*), md5(coalesce(string_agg(t::text, ',' order by t::text), ''))
                            from $t t"
  done
}
equal() {
  fingerprint "$source_db" >"$work/source.rows"
  fingerprint "$target_db" >"$work/target.rows"
  diff "$work/source.rows" "$work/target.rows" >"$work/rows.diff"
}
run_all() {
  sleep 1.1  # past the safe horizon's margin: rows stamped a moment ago are the next run's
  "$tidemark" run source_public --config "$work/tidemark.yaml" >>"$work/runs.log" 2>&1 &&
    "$tidemark" run source_extras --config "$work/tidemark.yaml" >>"$work/runs.log" 2>&1
}
check "the first runs create every target and load it" run_all
created() { [ "$(grep -c 'target table created' "$work/runs.log")" = 19 ]; }
check "each table's first run created its target" created
check "after the first runs every table equals its source row for row" equal

# What the application does next: rentals returned, payments taken,
# customers edited, a film added, a tag changed, a setting changed and one
# dropped (pagila's triggers and moddatetime stamp every update), pages
# viewed, an audit line repeated and one removed.
psql_source -c "
  update rental set return_date = now() where rental_id in (select rental_id from rental where return_date is null limit 50);
  insert into payment (customer_id, staff_id, rental_id, amount, payment_date)
    select customer_id, staff_id, rental_id, 4.99, '2022-07-15 12:00+00' from rental limit 20;
  update customer set email = lower(email), activebool = not activebool where customer_id <= 30;
  insert into film (title, language_id, rating, special_features)
    values ('A Test Of Time', 1, 'PG-13', '{Trailers}');
  update extras.tagged set tags = tags || 'tested=>yes' where id = 1;
  update extras.settings set value = 'paused' where key = 'mode';
  delete from extras.settings where key = 'limit';
  insert into extras.settings values ('region', 'eu');
  insert into extras.page_views (path) values ('/films/1'), ('/');
  insert into extras.audit_lines values ('checked');
  delete from extras.audit_lines where line = 'started'"
check "the second runs load the updates" run_all
check "after the updates every table equals its source row for row" equal

if [ "$failed" -gt 0 ]; then
  cat "$work/discover.out" >&2
  tail -n 20 "$work/validate.out" "$work/runs.log" >&2
  cat "$work/rows.diff" >&2 || true
fi
report
