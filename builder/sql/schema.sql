-- An example of a typical training-plans database: plans, their reference data (disciplines, levels), and the
-- publication and approval state kept apart from the plan itself, as editorial tools usually do. The catalog
-- builder never reads these tables directly: it reads the view in catalog_source_plans.sql, which maps them to
-- the row contract. Your own tables will differ; see README.md for how to write the view over them.

CREATE TABLE disciplines (
  id smallint PRIMARY KEY,
  code text NOT NULL UNIQUE,
  name text NOT NULL
);

CREATE TABLE levels (
  id smallint PRIMARY KEY,
  code text NOT NULL UNIQUE,
  name text NOT NULL
);

CREATE TABLE plans (
  id uuid PRIMARY KEY,
  title text NOT NULL,
  summary text,
  cover_image_url text,
  level_id smallint REFERENCES levels (id),           -- no level: the catalog says "none"
  discipline_id smallint NOT NULL REFERENCES disciplines (id),
  duration_weeks bigint NOT NULL,                      -- bigint: the driver returns it as a string
  sessions_per_week integer,
  minutes_per_session numeric(4, 0),                   -- numeric: the driver returns it as a string
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Publication: an editor publishes a plan or takes it back.
CREATE TABLE plan_publications (
  plan_id uuid PRIMARY KEY REFERENCES plans (id) ON DELETE CASCADE,
  state text NOT NULL CHECK (state IN ('draft', 'published', 'withdrawn')),
  changed_at timestamptz NOT NULL DEFAULT now()
);

-- Approval: a reviewer signs off the content (or not).
CREATE TABLE plan_approvals (
  plan_id uuid PRIMARY KEY REFERENCES plans (id) ON DELETE CASCADE,
  state text NOT NULL CHECK (state IN ('pending', 'approved', 'rejected')),
  reviewed_by text,
  reviewed_at timestamptz
);

-- Reference data. The database knows a discipline the catalog does not serve (yoga): the view leaves it out.
INSERT INTO disciplines (id, code, name) VALUES
  (1, 'strength', 'Strength training'),
  (2, 'running', 'Running'),
  (3, 'yoga', 'Yoga');

INSERT INTO levels (id, code, name) VALUES
  (1, 'beginner', 'Beginner'),
  (2, 'intermediate', 'Intermediate'),
  (3, 'advanced', 'Advanced');
