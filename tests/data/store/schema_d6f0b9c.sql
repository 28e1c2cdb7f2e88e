-- The first schema of sizing/store.py (commit d6f0b9c), unversioned (user_version 0).
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,            -- running | complete | interrupted | failed
    inventory TEXT NOT NULL,
    argv TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    options TEXT NOT NULL DEFAULT '{}',     -- JSON: the run's options (cores, ht, profiles, ...)
    environment TEXT NOT NULL DEFAULT '{}', -- JSON: per-host fingerprint
    note TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS points (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    created_at REAL NOT NULL,
    host TEXT NOT NULL,
    platform TEXT NOT NULL,
    cores INTEGER NOT NULL,
    ht TEXT NOT NULL,
    profile TEXT NOT NULL,
    status TEXT NOT NULL,            -- measured | invalid | skipped | failed
    reason TEXT NOT NULL DEFAULT '',
    value REAL,
    unit TEXT NOT NULL DEFAULT '',
    repetitions INTEGER NOT NULL DEFAULT 0,
    spread REAL,
    ci_low REAL,
    ci_high REAL,
    flags TEXT NOT NULL DEFAULT '[]',     -- JSON list
    metadata TEXT NOT NULL DEFAULT '{}'   -- JSON
);
CREATE INDEX IF NOT EXISTS points_run ON points(run_id);
CREATE TABLE IF NOT EXISTS samples (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    point_id INTEGER NOT NULL REFERENCES points(id),
    repetition INTEGER NOT NULL,     -- 0 is the warm-up
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS samples_point ON samples(point_id);
