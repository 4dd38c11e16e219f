-- frontier-lab database schema (current version: see SCHEMA_VERSION in backend/store.py).
-- A fresh database runs this file; an older one runs db/migrations/NNN.sql in order.
-- JSON-valued columns are VARCHAR holding JSON text, decoded by backend/store.py; STRUCT columns are
-- the dataclasses of backend/records.py (Rewards, TestResult).

CREATE TABLE IF NOT EXISTS schema_meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS problems (
    id              VARCHAR PRIMARY KEY,   -- bench/slug
    bench           VARCHAR NOT NULL,
    title           VARCHAR NOT NULL,
    statement       VARCHAR NOT NULL,
    input_spec      VARCHAR,
    output_spec     VARCHAR,
    difficulty      VARCHAR,               -- easy | medium | hard
    kind            VARCHAR NOT NULL,      -- stdin | functional
    starter_code    VARCHAR,
    func_name       VARCHAR,
    time_limit_s    DOUBLE NOT NULL,
    memory_limit_mb INTEGER NOT NULL,
    checker         VARCHAR NOT NULL,      -- exact | float:<tol> | lcb | functional | special (source in checker_source)
    checker_source  VARCHAR,
    platform        VARCHAR,
    contest_date    VARCHAR,
    tags            VARCHAR,               -- JSON list
    judge_error     VARCHAR                -- set at import when the problem cannot be judged
);

CREATE TABLE IF NOT EXISTS tests (
    problem_id VARCHAR NOT NULL,
    idx        INTEGER NOT NULL,
    input      VARCHAR,
    output     VARCHAR,
    input_len  BIGINT NOT NULL,            -- characters of stdin
    tier       INTEGER NOT NULL,           -- smallest k with input_len < 10^k
    is_public  BOOLEAN DEFAULT FALSE,
    PRIMARY KEY (problem_id, idx)
);

CREATE TABLE IF NOT EXISTS checkpoints (
    id            VARCHAR PRIMARY KEY,
    path          VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL,        -- base | trained | merged
    label         VARCHAR,
    low_id        VARCHAR,                 -- merged: endpoints and alpha
    high_id       VARCHAR,
    alpha         DOUBLE,
    weights       VARCHAR,                 -- JSON: general linear combination
    reward        VARCHAR,                 -- trained: reward it was trained with
    setting       VARCHAR,
    step          INTEGER,
    experiment_id VARCHAR,                 -- trained: the RL experiment that made it
    content_hash  VARCHAR,
    model_type    VARCHAR,
    created_at    TIMESTAMP DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS experiments (
    id         VARCHAR PRIMARY KEY,
    kind       VARCHAR NOT NULL,           -- sweep | eval | rl | import | rollout | lab
    name       VARCHAR NOT NULL,
    spec       VARCHAR,                    -- JSON of the spec that created it
    note       VARCHAR,                    -- honest label shown by the dashboard
    status     VARCHAR NOT NULL DEFAULT 'created',
    created_at TIMESTAMP DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS jobs (
    id            VARCHAR PRIMARY KEY,
    experiment_id VARCHAR,
    kind          VARCHAR NOT NULL,
    status        VARCHAR NOT NULL,        -- queued | running | done | failed | cancelled
    stage         VARCHAR,
    progress      VARCHAR,                 -- JSON: {stage: {done, total, rate, eta_s}}
    error         VARCHAR,
    log_path      VARCHAR,
    pid           INTEGER,
    created_at    TIMESTAMP DEFAULT current_timestamp,
    updated_at    TIMESTAMP DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS samples (
    experiment_id     VARCHAR NOT NULL,
    checkpoint_id     VARCHAR NOT NULL,
    problem_id        VARCHAR NOT NULL,
    sample_idx        INTEGER NOT NULL,
    setting           VARCHAR,
    completion        VARCHAR,
    transcript        VARCHAR,             -- JSON list of turns
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    finish_reason     VARCHAR,             -- stop | length
    code              VARCHAR,
    language          VARCHAR,
    extract_error     VARCHAR,             -- why no program could be extracted
    latency_s         DOUBLE,
    PRIMARY KEY (experiment_id, checkpoint_id, problem_id, sample_idx)
);

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
    rewards             STRUCT(R_1 DOUBLE, R_2 DOUBLE, R_3 DOUBLE, R_4 DOUBLE, R_5 DOUBLE, R_6 DOUBLE, R_inf DOUBLE,
                               partial_discrete DOUBLE, partial_continuous DOUBLE),  -- nested-coverage rewards
    test_results        STRUCT("index" INTEGER, input_len BIGINT, tier INTEGER, verdict VARCHAR, cpu_s DOUBLE,
                               wall_s DOUBLE, mem_mb DOUBLE, detail VARCHAR)[],  -- one per test, in index order
    format_reason       VARCHAR,           -- format failure: why no program could be extracted
    experiment_key      UBIGINT,           -- md5_number_lower(experiment_id), filled by backend/store.py (see 006.sql)
    PRIMARY KEY (experiment_id, checkpoint_id, problem_id, sample_idx)
);

CREATE TABLE IF NOT EXISTS metrics (
    experiment_id VARCHAR NOT NULL,
    step          INTEGER NOT NULL,
    name          VARCHAR NOT NULL,     -- reward, pass rate per tier, outcome fractions, kl, completion length
    value         DOUBLE,
    PRIMARY KEY (experiment_id, step, name)
);
