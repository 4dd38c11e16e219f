-- v1 -> v2: per-step training metrics of RL experiments.
CREATE TABLE IF NOT EXISTS metrics (
    experiment_id VARCHAR NOT NULL,
    step          INTEGER NOT NULL,
    name          VARCHAR NOT NULL,
    value         DOUBLE,
    PRIMARY KEY (experiment_id, step, name)
);
