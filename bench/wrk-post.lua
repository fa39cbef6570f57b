-- The request the consumer sends for one message of the benchmark batch (same
-- method, headers and body size), so wrk measures the downstream's own ceiling.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Idempotency-Key"] = "load-1"
wrk.headers["X-Tenant-Id"] = "tenant-1"
wrk.headers["X-Correlation-Id"] = "00000000-0000-4000-8000-000000000001"
wrk.body = '{"idempotencyKey":"load-1","note":"' .. string.rep("x", 500)
  .. '","operation":"invoice.create","schemaVersion":"1","tenantId":"tenant-1"}'
