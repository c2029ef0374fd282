-- Monthly retention report: for each signup cohort, how many customers ordered again
-- in each of the following six months.

CREATE TABLE IF NOT EXISTS customers (
    customer_id   BIGINT PRIMARY KEY,
    email         VARCHAR(320) NOT NULL UNIQUE,
    country_code  CHAR(2)      NOT NULL,
    signed_up_at  TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE IF NOT EXISTS orders (
    order_id      BIGINT PRIMARY KEY,
    customer_id   BIGINT       NOT NULL REFERENCES customers (customer_id),
    placed_at     TIMESTAMP    NOT NULL,
    total_cents   INTEGER      NOT NULL CHECK (total_cents >= 0),
    status        VARCHAR(16)  NOT NULL DEFAULT 'pending'
);

CREATE INDEX IF NOT EXISTS orders_customer_placed_idx ON orders (customer_id, placed_at);

WITH cohorts AS (
    SELECT
        c.customer_id,
        DATE_TRUNC('month', c.signed_up_at) AS cohort_month
    FROM customers AS c
    WHERE c.signed_up_at >= DATE '2023-01-01'
),
activity AS (
    SELECT
        o.customer_id,
        DATE_TRUNC('month', o.placed_at) AS order_month,
        SUM(o.total_cents) AS spent_cents
    FROM orders AS o
    WHERE o.status IN ('paid', 'shipped', 'delivered')
    GROUP BY o.customer_id, DATE_TRUNC('month', o.placed_at)
),
joined AS (
    SELECT
        co.cohort_month,
        co.customer_id,
        (EXTRACT(YEAR FROM a.order_month) - EXTRACT(YEAR FROM co.cohort_month)) * 12
            + (EXTRACT(MONTH FROM a.order_month) - EXTRACT(MONTH FROM co.cohort_month)) AS month_offset,
        a.spent_cents
    FROM cohorts AS co
    JOIN activity AS a ON a.customer_id = co.customer_id
)
SELECT
    TO_CHAR(cohort_month, 'YYYY-MM') AS cohort,
    COUNT(DISTINCT customer_id) FILTER (WHERE month_offset = 0) AS m0,
    COUNT(DISTINCT customer_id) FILTER (WHERE month_offset = 1) AS m1,
    COUNT(DISTINCT customer_id) FILTER (WHERE month_offset = 2) AS m2,
    COUNT(DISTINCT customer_id) FILTER (WHERE month_offset = 3) AS m3,
    COUNT(DISTINCT customer_id) FILTER (WHERE month_offset = 4) AS m4,
    COUNT(DISTINCT customer_id) FILTER (WHERE month_offset = 5) AS m5,
    COUNT(DISTINCT customer_id) FILTER (WHERE month_offset = 6) AS m6,
    ROUND(SUM(spent_cents) / 100.0, 2) AS revenue
FROM joined
WHERE month_offset BETWEEN 0 AND 6
GROUP BY cohort_month
ORDER BY cohort_month;

-- Customers who ordered in the first month but never again.
SELECT c.email, c.country_code, MIN(o.placed_at) AS first_order
FROM customers AS c
JOIN orders AS o ON o.customer_id = c.customer_id
GROUP BY c.customer_id, c.email, c.country_code
HAVING COUNT(*) = 1
   AND MIN(o.placed_at) < NOW() - INTERVAL '90 days'
ORDER BY first_order DESC
LIMIT 50;
