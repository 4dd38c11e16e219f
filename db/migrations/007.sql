-- v6 -> v7: an evaluation's rewards and per-test results are typed columns, not JSON text: rewards a
-- STRUCT of R_1..R_6, R_inf and the two partial credits, test_results a LIST of STRUCT (one per
-- test, in index order), and a format failure's reason its own column (v6 appended it to the list
-- as a {"format_reason": ...} element). The macros v6_* that read the JSON are db/v6_json.sql's.
CREATE TABLE evaluations_v7 (
    experiment_id       VARCHAR NOT NULL,
    checkpoint_id       VARCHAR NOT NULL,
    problem_id          VARCHAR NOT NULL,
    sample_idx          INTEGER NOT NULL,
    outcome             VARCHAR NOT NULL,
    verdict             VARCHAR,
    first_failing_test  INTEGER,
    first_failing_tier  INTEGER,
    highest_tier_passed INTEGER,
    cpu_s               DOUBLE,
    mem_mb              DOUBLE,
    accounting          VARCHAR,
    rewards             STRUCT(R_1 DOUBLE, R_2 DOUBLE, R_3 DOUBLE, R_4 DOUBLE, R_5 DOUBLE, R_6 DOUBLE, R_inf DOUBLE,
                               partial_discrete DOUBLE, partial_continuous DOUBLE),
    test_results        STRUCT("index" INTEGER, input_len BIGINT, tier INTEGER, verdict VARCHAR, cpu_s DOUBLE,
                               wall_s DOUBLE, mem_mb DOUBLE, detail VARCHAR)[],
    format_reason       VARCHAR,
    experiment_key      UBIGINT,
    PRIMARY KEY (experiment_id, checkpoint_id, problem_id, sample_idx)
);
INSERT INTO evaluations_v7
SELECT experiment_id, checkpoint_id, problem_id, sample_idx, outcome, verdict, first_failing_test, first_failing_tier,
       highest_tier_passed, cpu_s, mem_mb, accounting, v6_rewards(rewards), v6_test_results(test_results),
       v6_format_reason(test_results), experiment_key
FROM evaluations ORDER BY experiment_id, checkpoint_id, problem_id, sample_idx;
DROP TABLE evaluations;
ALTER TABLE evaluations_v7 RENAME TO evaluations;
