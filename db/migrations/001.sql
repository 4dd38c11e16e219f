-- v0 -> v1. v0 is the unversioned prototype layout: problems(id, title, statement) and
-- tests(problem_id, idx, input, output). Existing rows are kept; db/schema.sql then creates
-- every table that is still missing.
ALTER TABLE problems ADD COLUMN IF NOT EXISTS bench VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS input_spec VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS output_spec VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS difficulty VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS kind VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS starter_code VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS func_name VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS time_limit_s DOUBLE;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS memory_limit_mb INTEGER;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS checker VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS checker_source VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS platform VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS contest_date VARCHAR;
ALTER TABLE problems ADD COLUMN IF NOT EXISTS tags VARCHAR;
UPDATE problems SET
    bench = coalesce(bench, split_part(id, '/', 1)),
    kind = coalesce(kind, 'stdin'),
    time_limit_s = coalesce(time_limit_s, 2.0),
    memory_limit_mb = coalesce(memory_limit_mb, 256),
    checker = coalesce(checker, 'exact');
ALTER TABLE tests ADD COLUMN IF NOT EXISTS input_len BIGINT;
ALTER TABLE tests ADD COLUMN IF NOT EXISTS tier INTEGER;
ALTER TABLE tests ADD COLUMN IF NOT EXISTS data_path VARCHAR;
ALTER TABLE tests ADD COLUMN IF NOT EXISTS is_public BOOLEAN DEFAULT FALSE;
UPDATE tests SET
    input_len = coalesce(input_len, length(input)),
    tier = coalesce(tier, greatest(1, length(CAST(length(input) AS VARCHAR))));
