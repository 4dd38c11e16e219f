-- v4 -> v5: outcome classes as docs/method.md defines them, recomputed from the stored first failing
-- verdict (the table in docs/findings.md; backend/grading/verdicts.py:outcome_of is the same table).
-- A program that does not parse or compile (CE) is now a format failure, as is no program at all
-- (FORMAT); its verdict stays CE. A v0 database has no evaluations yet: it gets the v4 table here
-- (db/schema.sql then finds it and leaves it).
CREATE TABLE IF NOT EXISTS evaluations (
    experiment_id       VARCHAR NOT NULL,
    checkpoint_id       VARCHAR NOT NULL,
    problem_id          VARCHAR NOT NULL,
    sample_idx          INTEGER NOT NULL,
    outcome             VARCHAR NOT NULL,  -- correct | optimization_failure | correctness_failure | format_failure
    verdict             VARCHAR,
    first_failing_test  INTEGER,
    first_failing_tier  INTEGER,
    highest_tier_passed INTEGER,
    cpu_s               DOUBLE,
    mem_mb              DOUBLE,
    accounting          VARCHAR,           -- how cpu_s/mem_mb were measured: cgroup-v2 | cgroup-v1 | rlimits
    rewards             VARCHAR,           -- JSON: R_1..R_6, R_inf, partial credit
    test_results        VARCHAR,           -- JSON list of per-test results
    PRIMARY KEY (experiment_id, checkpoint_id, problem_id, sample_idx)
);
UPDATE evaluations SET outcome = CASE
    WHEN verdict = 'AC' THEN 'correct'
    WHEN verdict IN ('FORMAT', 'CE') THEN 'format_failure'
    WHEN verdict IN ('TLE', 'MLE') THEN 'optimization_failure'
    WHEN verdict = 'SE' THEN 'sandbox_error'
    ELSE 'correctness_failure'
END
WHERE verdict IS NOT NULL;  -- a row without a verdict keeps the class it was stored with
