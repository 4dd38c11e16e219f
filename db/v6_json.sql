-- How a v6 evaluation's JSON text reads typed: rewards as the v7 STRUCT, the per-test results as a
-- LIST of STRUCT (v6 appended a {"format_reason": ...} element to a format failure's list; it is
-- not a test) and that element's reason. Temporary macros, defined by backend/store.py for
-- db/migrations/007.sql and for importing Parquet exported by a v6 frontier-lab (the committed lab).
CREATE OR REPLACE TEMP MACRO v6_rewards(j) AS CAST(json_transform(j,
    '{"R_1": "DOUBLE", "R_2": "DOUBLE", "R_3": "DOUBLE", "R_4": "DOUBLE", "R_5": "DOUBLE", "R_6": "DOUBLE",
      "R_inf": "DOUBLE", "partial_discrete": "DOUBLE", "partial_continuous": "DOUBLE"}')
    AS STRUCT(R_1 DOUBLE, R_2 DOUBLE, R_3 DOUBLE, R_4 DOUBLE, R_5 DOUBLE, R_6 DOUBLE, R_inf DOUBLE,
              partial_discrete DOUBLE, partial_continuous DOUBLE));
CREATE OR REPLACE TEMP MACRO v6_test_parts(j) AS json_transform(j,
    '[{"index": "INTEGER", "input_len": "BIGINT", "tier": "INTEGER", "verdict": "VARCHAR", "cpu_s": "DOUBLE",
       "wall_s": "DOUBLE", "mem_mb": "DOUBLE", "detail": "VARCHAR", "format_reason": "VARCHAR"}]');
CREATE OR REPLACE TEMP MACRO v6_test_results(j) AS list_transform(
    list_filter(v6_test_parts(j), lambda t: t['index'] IS NOT NULL),
    lambda t: {'index': t['index'], 'input_len': t['input_len'], 'tier': t['tier'], 'verdict': t['verdict'],
               'cpu_s': t['cpu_s'], 'wall_s': t['wall_s'], 'mem_mb': t['mem_mb'], 'detail': t['detail']});
CREATE OR REPLACE TEMP MACRO v6_format_reason(j) AS
    list_filter(v6_test_parts(j), lambda t: t['format_reason'] IS NOT NULL)[1]['format_reason'];
