-- v2 -> v3: how each evaluation's CPU time and memory were measured (cgroup-v2 | cgroup-v1 | rlimits),
-- and why a problem cannot be judged (a checker that does not compile, found at import).
-- (IF EXISTS: a v0 database has no evaluations yet; db/schema.sql then creates it whole.)
ALTER TABLE IF EXISTS evaluations ADD COLUMN IF NOT EXISTS accounting VARCHAR;
ALTER TABLE IF EXISTS problems ADD COLUMN IF NOT EXISTS judge_error VARCHAR;
