-- The demo's source: a small shop.
create table customers (
  customer_id bigint primary key,
  name        text not null,
  updated_at  timestamptz not null default clock_timestamp()
);
create table orders (
  order_id    bigserial primary key,
  customer_id bigint not null references customers,
  status      text not null,
  amount      numeric(12, 2) not null,
  ordered_at  timestamptz not null default clock_timestamp(),
  updated_at  timestamptz not null default clock_timestamp()
);
create index on orders (updated_at);
create index on orders (ordered_at);
create table customer_events (
  event_id    bigserial primary key,
  customer_id bigint not null,
  kind        text not null,
  created_at  timestamptz not null default clock_timestamp()
);

insert into customers (customer_id, name)
select g, 'customer ' || g from generate_series(1, 200) g;

-- Three days of history, so the first load and the daily partitions have work.
insert into orders (customer_id, status, amount, ordered_at, updated_at)
select 1 + (g % 200), (array['new', 'paid', 'completed', 'completed'])[1 + g % 4],
       round((5 + random() * 200)::numeric, 2),
       now() - interval '3 days' + g * interval '30 seconds',
       now() - interval '3 days' + g * interval '30 seconds'
from generate_series(1, 8000) g;
