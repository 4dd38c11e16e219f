-- v5 -> v6: nothing. The number is kept for another change made at the same time as v7 (#45); a
-- database at v5 passes through it unchanged.
SELECT 1;
