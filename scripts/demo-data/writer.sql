-- One step of the demo's writer: new orders, status changes, an event, and
-- now and then a late row whose updated_at is minutes old when it commits.
insert into orders (customer_id, status, amount)
select 1 + (random() * 199)::int, 'new', round((5 + random() * 200)::numeric, 2)
from generate_series(1, 1 + (random() * 5)::int);

update orders set status = 'paid', updated_at = clock_timestamp()
where order_id in (select order_id from orders where status = 'new' order by random() limit 3);

update orders set status = 'completed', updated_at = clock_timestamp()
where order_id in (select order_id from orders where status = 'paid' order by random() limit 2);

insert into customer_events (customer_id, kind)
values (1 + (random() * 199)::int, (array['login', 'view', 'cart'])[1 + (random() * 2)::int]);

-- A late row: its cursor value is three minutes in the past.
insert into orders (customer_id, status, amount, ordered_at, updated_at)
select 1 + (random() * 199)::int, 'completed', 42.00,
       clock_timestamp() - interval '3 minutes', clock_timestamp() - interval '3 minutes'
where random() < 0.2;
