-- The demo's target: tidemark writes into tables that already exist.
create schema raw;
create schema mart;
create table raw.orders (
  order_id    bigint primary key,
  customer_id bigint,
  status      text,
  amount      numeric(12, 2),
  ordered_at  timestamptz,
  updated_at  timestamptz
);
create index on raw.orders (ordered_at);
create table raw.customers (
  customer_id bigint primary key,
  name        text,
  updated_at  timestamptz
);
create table raw.customer_events (
  event_id    bigint primary key,
  customer_id bigint,
  kind        text,
  created_at  timestamptz
);
create table mart.daily_revenue (
  ordered_at timestamptz not null,
  orders     bigint not null,
  revenue    numeric not null
);
create table mart.customer_revenue (
  day         date not null,
  customer_id bigint not null,
  orders      bigint not null,
  revenue     numeric not null,
  primary key (day, customer_id)
);
