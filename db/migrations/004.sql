-- v3 -> v4: tests.data_path is gone (it was never written: every test's input and output are inline).
ALTER TABLE IF EXISTS tests DROP COLUMN IF EXISTS data_path;
