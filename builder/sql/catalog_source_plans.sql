-- The relation the catalog builder reads (`catalog build --source postgres://…`, relation name set with
-- --source-relation / CATALOG_SOURCE_RELATION, default catalog_source_plans). Its columns are exactly the row
-- contract (docs/decisions.md#source-rows); the builder selects these eleven columns and adds `WHERE published AND approved`.
-- Values are passed through as they are: the builder trims, defaults and checks them (an empty summary becomes
-- null, a missing level "none", bigint and numeric strings integers) and reports the rows that break a rule.

CREATE OR REPLACE VIEW catalog_source_plans AS
SELECT
  p.id,                                                     -- uuid
  p.title,                                                  -- text, must not be blank
  p.summary,                                                -- text or null
  p.cover_image_url AS cover_url,                           -- absolute https: URL, or null / empty
  l.code AS level,                                          -- beginner, intermediate, advanced, or null
  d.code AS discipline,                                     -- strength or running
  p.duration_weeks AS weeks_count,                          -- integer >= 1
  p.sessions_per_week AS days_per_week,                     -- 1 to 7, or null
  p.minutes_per_session AS est_minutes_per_session,         -- integer >= 1, or null
  coalesce(pub.state = 'published', false) AS published,    -- boolean, never null
  coalesce(apr.state = 'approved', false) AS approved       -- boolean, never null
FROM plans AS p
JOIN disciplines AS d ON d.id = p.discipline_id
LEFT JOIN levels AS l ON l.id = p.level_id
LEFT JOIN plan_publications AS pub ON pub.plan_id = p.id
LEFT JOIN plan_approvals AS apr ON apr.plan_id = p.id
-- Plans of disciplines the catalog does not serve are not catalog rows at all.
WHERE d.code IN ('strength', 'running');

COMMENT ON VIEW catalog_source_plans IS
  'Rows for the training plan catalog builder (row contract, contract section 1).';
