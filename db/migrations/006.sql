-- v5 -> v6: evaluations carry an integer experiment_key (md5_number_lower(experiment_id)) and are
-- rewritten in experiment order, so a query on one experiment reads only its own row groups.
-- DuckDB's zone maps keep a short prefix of a string, and experiment ids share theirs
-- ("sweep-202506…"): filtered on experiment_id alone, every outcome query scanned every row group
-- of every experiment ever stored. backend/store.py fills the key on every insert and filters on it.
CREATE TABLE evaluations_v6 (
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
    experiment_key      UBIGINT,           -- md5_number_lower(experiment_id), filled by backend/store.py (see 006.sql)
    PRIMARY KEY (experiment_id, checkpoint_id, problem_id, sample_idx)
);
INSERT INTO evaluations_v6
SELECT experiment_id, checkpoint_id, problem_id, sample_idx, outcome, verdict, first_failing_test, first_failing_tier, highest_tier_passed, cpu_s, mem_mb, accounting, rewards, test_results, md5_number_lower(experiment_id)
FROM evaluations ORDER BY experiment_id, checkpoint_id, problem_id, sample_idx;
DROP TABLE evaluations;
ALTER TABLE evaluations_v6 RENAME TO evaluations;
