import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DISCIPLINES, FIXTURE_COVER_ORIGIN } from '../contract/index.ts';
import { ROOT } from '../testing/cli.ts';
import { validateRows } from '../testing/plans.ts';
import { formatInvalidRow, type InvalidRow, SourceRowError } from './errors.ts';
import { COVER_URL_MAX_LENGTH, DEFAULT_LINKS, SUMMARY_MAX_LENGTH, TITLE_MAX_LENGTH } from './model.ts';
import { RowValidator } from './rows.ts';

const links = { baseUrl: 'https://catalog.example.com', appScheme: 'trainingplans' };

/** A valid, published, approved row; tests change one field at a time. */
function row(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: '0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10',
    title: 'Couch to 5K',
    summary: 'Walk-run intervals.',
    cover_url: 'https://images.example.com/c25k.jpg',
    level: 'beginner',
    discipline: 'running',
    weeks_count: 9,
    days_per_week: 3,
    est_minutes_per_session: 30,
    published: true,
    approved: true,
    ...overrides,
  };
}

/** What a discipline must be; a name longer than any discipline (so none); a capitalised one (so none). */
const DISCIPLINE_RULE = `must be exactly ${DISCIPLINES.join(' or ')}`;
const UNKNOWN_DISCIPLINE = DISCIPLINES.join('-');
const UPPER_DISCIPLINE = `${DISCIPLINES[0].charAt(0).toUpperCase()}${DISCIPLINES[0].slice(1)}`;

function without(field: string): Record<string, unknown> {
  const copy = row();
  delete copy[field];
  return copy;
}

/** `text` as a regular expression that matches it literally. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function problemsOf(...rows: unknown[]) {
  return validateRows(rows, links).invalid.map((p) => ({ row: p.row, field: p.field, reason: p.reason }));
}

describe('a valid row', () => {
  it('maps to a plan with exactly the spec fields in the spec order', () => {
    const { plans, invalid } = validateRows([row()], links);
    expect(invalid).toEqual([]);
    expect(plans).toHaveLength(1);
    expect(Object.keys(plans[0] ?? {})).toEqual([
      'id',
      'title',
      'summary',
      'coverUrl',
      'level',
      'discipline',
      'disciplineLabel',
      'weeksCount',
      'daysPerWeek',
      'estMinutesPerSession',
      'webUrl',
      'appUrl',
    ]);
    expect(plans[0]).toEqual({
      id: '0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10',
      title: 'Couch to 5K',
      summary: 'Walk-run intervals.',
      coverUrl: 'https://images.example.com/c25k.jpg',
      level: 'beginner',
      discipline: 'running',
      disciplineLabel: 'Outdoor',
      weeksCount: 9,
      daysPerWeek: 3,
      estMinutesPerSession: 30,
      webUrl: 'https://catalog.example.com/plans/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10',
      appUrl: 'trainingplans://plan/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10',
    });
  });

  it('labels strength plans "Workouts" and running plans "Outdoor"', () => {
    const { plans } = validateRows(
      [row({ discipline: 'strength' }), row({ id: '1b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10' })],
      links,
    );
    expect(plans.map((p) => [p.discipline, p.disciplineLabel])).toEqual([
      ['strength', 'Workouts'],
      ['running', 'Outdoor'],
    ]);
  });

  it('lowercases an upper-case id and trims strings', () => {
    const { plans } = validateRows(
      [row({ id: ' 0B6E8A8E-6C1E-4B8E-9A4E-6F7C3F1D2A10 ', title: '  Couch to 5K\t', summary: ' Walk. ' })],
      links,
    );
    expect(plans[0]?.id).toBe('0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10');
    expect(plans[0]?.title).toBe('Couch to 5K');
    expect(plans[0]?.summary).toBe('Walk.');
    expect(plans[0]?.webUrl).toBe('https://catalog.example.com/plans/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10');
  });

  it.each([
    ['missing', undefined],
    ['null', null],
    ['empty', ''],
    ['blank', '   '],
  ])('reports a %s level as none', (_label, level) => {
    const input = level === undefined ? without('level') : row({ level });
    expect(validateRows([input], links).plans[0]?.level).toBe('none');
  });

  it.each(['summary', 'cover_url', 'days_per_week', 'est_minutes_per_session'])(
    'turns a missing, null or empty %s into null',
    (field) => {
      const camel =
        { summary: 'summary', cover_url: 'coverUrl', days_per_week: 'daysPerWeek' }[field] ??
        'estMinutesPerSession';
      for (const input of [without(field), row({ [field]: null }), row({ [field]: '  ' })]) {
        const { plans, invalid } = validateRows([input], links);
        expect(invalid).toEqual([]);
        expect((plans[0] as Record<string, unknown> | undefined)?.[camel]).toBeNull();
      }
    },
  );

  it('accepts integers given as strings, as databases return bigint and numeric', () => {
    const { plans } = validateRows(
      [row({ weeks_count: '12', days_per_week: ' 7 ', est_minutes_per_session: '+45' })],
      links,
    );
    expect(plans[0]).toMatchObject({ weeksCount: 12, daysPerWeek: 7, estMinutesPerSession: 45 });
  });

  it('points a fixture cover at the local edge in a local build (http:// on loopback), and keeps it in any other', () => {
    const fixture = `${FIXTURE_COVER_ORIGIN}/_local/covers/track.png`;
    const coverIn = (baseUrl: string, cover = fixture) =>
      validateRows([row({ cover_url: cover })], { ...links, baseUrl }).plans[0]?.coverUrl;
    expect(coverIn('http://127.0.0.1:8790')).toBe('http://127.0.0.1:8790/_local/covers/track.png');
    expect(coverIn('http://localhost:8787/')).toBe('http://localhost:8787/_local/covers/track.png');
    expect(coverIn('http://[::1]:8787')).toBe('http://[::1]:8787/_local/covers/track.png');
    for (const production of [
      'https://catalog.example.com',
      'https://127.0.0.1:8787',
      'http://catalog.example.com',
    ])
      expect(coverIn(production), production).toBe(fixture);
    expect(coverIn('http://127.0.0.1:8790', 'https://images.example.com/c25k.jpg')).toBe(
      'https://images.example.com/c25k.jpg',
    );
    // Only the origin itself: a host that merely starts like it is an ordinary cover.
    expect(coverIn('http://127.0.0.1:8790', 'https://fixtures.invalid.example.com/a.png')).toBe(
      'https://fixtures.invalid.example.com/a.png',
    );
  });

  it('ignores unknown extra columns', () => {
    const { plans } = validateRows([row({ author_email: 'x@example.com', internal_notes: 'secret' })], links);
    expect(plans[0]).not.toHaveProperty('author_email');
    expect(JSON.stringify(plans)).not.toContain('secret');
  });
});

describe('the publication gate', () => {
  it('leaves out unpublished and unapproved rows without validating them', () => {
    const report = validateRows(
      [
        row({ published: false, weeks_count: 0, level: 'expert' }),
        row({ approved: false, title: '' }),
        row({ published: false, approved: false }),
        row(),
      ],
      links,
    );
    expect(report.invalid).toEqual([]);
    expect(report.plans).toHaveLength(1);
    expect(report.skipped).toEqual({ unpublished: 2, unapproved: 1 });
    expect(report.total).toBe(4);
  });

  it('rejects a published or approved flag that is not a boolean', () => {
    expect(problemsOf(row({ published: 'true' }), row({ approved: 1 }), without('approved'))).toEqual([
      { row: 1, field: 'published', reason: 'must be a boolean (got "true")' },
      { row: 2, field: 'approved', reason: 'must be a boolean (got 1)' },
      { row: 3, field: 'approved', reason: 'is required' },
    ]);
  });
});

describe('invalid rows (one rule each)', () => {
  it.each([
    ['a missing id', without('id'), 'id', 'is required'],
    ['an id that is not a UUID', row({ id: 'plan-42' }), 'id', 'must be a UUID (got "plan-42")'],
    ['an empty title', row({ title: '   ' }), 'title', 'must not be empty (got "   ")'],
    ['a title that is not a string', row({ title: 7 }), 'title', 'must be a string (got 7)'],
    ['a summary that is not a string', row({ summary: 42 }), 'summary', 'must be a string or null (got 42)'],
    [
      'a cover_url over http',
      row({ cover_url: 'http://images.example.com/x.jpg' }),
      'cover_url',
      'must be an absolute https: URL or empty (got "http://images.example.com/x.jpg")',
    ],
    [
      'a relative cover_url',
      row({ cover_url: '/x.jpg' }),
      'cover_url',
      'must be an absolute https: URL or empty (got "/x.jpg")',
    ],
    [
      'a cover_url with a user name and password',
      row({ cover_url: 'https://cdn:s3cret@images.example.com/x.jpg' }),
      'cover_url',
      'must not carry a user name or password (user:password@): every partner sees it (got "https://cdn:***@images.example.com/x.jpg")',
    ],
    [
      'a cover_url with a user name',
      row({ cover_url: 'https://cdn@images.example.com/x.jpg' }),
      'cover_url',
      'must not carry a user name or password (user:password@): every partner sees it (got "https://cdn@images.example.com/x.jpg")',
    ],
    [
      'a cover_url with backslashes for slashes, its password not shown',
      row({ cover_url: 'https:\\\\cdn:s3cret@images.example.com/x.jpg' }),
      'cover_url',
      'must be an absolute https: URL or empty (got "https:\\\\\\\\cdn:***@images.example.com/x.jpg")',
    ],
    [
      'a cover_url longer than the limit',
      row({ cover_url: `https://images.example.com/${'c'.repeat(200_000)}.jpg` }),
      'cover_url',
      `must be at most ${COVER_URL_MAX_LENGTH} characters, not ${200_031} (got "https://images.example.com/${'c'.repeat(49)}...)`,
    ],
    [
      'an unknown level',
      row({ level: 'expert' }),
      'level',
      'must be one of none, beginner, intermediate, advanced (or empty) (got "expert")',
    ],
    [
      'a level in the wrong case',
      row({ level: 'Beginner' }),
      'level',
      'must be one of none, beginner, intermediate, advanced (or empty) (got "Beginner")',
    ],
    [
      'an unknown discipline',
      row({ discipline: UNKNOWN_DISCIPLINE }),
      'discipline',
      `${DISCIPLINE_RULE} (got "${UNKNOWN_DISCIPLINE}")`,
    ],
    [
      'a discipline in the wrong case',
      row({ discipline: UPPER_DISCIPLINE }),
      'discipline',
      `${DISCIPLINE_RULE} (got "${UPPER_DISCIPLINE}")`,
    ],
    ['a missing weeks_count', without('weeks_count'), 'weeks_count', 'is required'],
    ['a weeks_count of 0', row({ weeks_count: 0 }), 'weeks_count', 'must be an integer ≥ 1 (got 0)'],
    [
      'a fractional weeks_count string',
      row({ weeks_count: '12.5' }),
      'weeks_count',
      'must be an integer ≥ 1 (got "12.5")',
    ],
    ['an empty weeks_count', row({ weeks_count: '' }), 'weeks_count', 'must be an integer ≥ 1 (got "")'],
    [
      'days_per_week of 8',
      row({ days_per_week: 8 }),
      'days_per_week',
      'must be an integer from 1 to 7 or null (got 8)',
    ],
    [
      'days_per_week of 0',
      row({ days_per_week: '0' }),
      'days_per_week',
      'must be an integer from 1 to 7 or null (got "0")',
    ],
    [
      'a fractional est_minutes_per_session',
      row({ est_minutes_per_session: 42.5 }),
      'est_minutes_per_session',
      'must be an integer ≥ 1 or null (got 42.5)',
    ],
    [
      'a boolean est_minutes_per_session',
      row({ est_minutes_per_session: true }),
      'est_minutes_per_session',
      'must be an integer ≥ 1 or null (got true)',
    ],
  ])('rejects %s', (_label, input, field, reason) => {
    expect(problemsOf(input)).toEqual([{ row: 1, field, reason }]);
  });

  it('rejects a title or summary longer than the limit, naming its length, and keeps the line short', () => {
    const title = 'a'.repeat(70_000);
    const summary = `  ${'b'.repeat(SUMMARY_MAX_LENGTH + 1)}  `;
    expect(problemsOf(row({ title, summary }))).toEqual([
      {
        row: 1,
        field: 'title',
        reason: `must be at most ${TITLE_MAX_LENGTH} characters, not 70000 (got "${'a'.repeat(76)}...)`,
      },
      {
        row: 1,
        field: 'summary',
        reason: `must be at most ${SUMMARY_MAX_LENGTH} characters, not ${SUMMARY_MAX_LENGTH + 1} (got "  ${'b'.repeat(74)}...)`,
      },
    ]);
  });

  it.each([
    [
      'a NUL in a title',
      { title: 'Couch\u0000 to 5K' },
      'title',
      'a control character (U+0000 at character 6)',
    ],
    ['a DEL in a title', { title: 'Couch\u007F' }, 'title', 'a control character (U+007F at character 6)'],
    [
      'a C1 control in a title',
      { title: '\u009B31m Red' },
      'title',
      'a control character (U+009B at character 1)',
    ],
    [
      'a tab inside a title',
      { title: 'Couch\tto 5K' },
      'title',
      'a control character (U+0009 at character 6)',
    ],
    [
      'a line break inside a title',
      { title: 'Couch\nto 5K' },
      'title',
      'a control character (U+000A at character 6)',
    ],
    [
      'a right-to-left override in a title',
      { title: 'Plan \u202Egnp.exe' },
      'title',
      'a bidirectional embedding, override or isolate character (U+202E at character 6)',
    ],
    [
      'an isolate in a title',
      { title: '\u2068Plan\u2069' },
      'title',
      'a bidirectional embedding, override or isolate character (U+2068 at character 1)',
    ],
    [
      'a NUL in a summary',
      { summary: 'Walk.\u0000' },
      'summary',
      'a control character (U+0000 at character 6)',
    ],
    [
      'a form feed in a summary',
      { summary: 'Walk.\fRun.' },
      'summary',
      'a control character (U+000C at character 6)',
    ],
    [
      'an embedding in a summary',
      { summary: 'Walk \u202Brun' },
      'summary',
      'a bidirectional embedding, override or isolate character (U+202B at character 6)',
    ],
  ])('rejects %s, naming the character and where it is', (_label, overrides, field, what) => {
    const reason = expect.stringMatching(new RegExp(`^must not contain ${literal(what)} \\(got "`));
    expect(problemsOf(row(overrides))).toEqual([{ row: 1, field, reason }]);
  });

  it('quotes such a value so that it can neither reorder the report line nor act on the terminal', () => {
    const [problem] = validateRows(
      [row({ id: 'x\u202Ey', title: 'a\u202Eb\u0000c\u009Bd' })],
      links,
    ).invalid.filter((p) => p.field === 'title');
    expect(problem?.reason).toBe(
      'must not contain a bidirectional embedding, override or isolate character (U+202E at character 2) (got "a\\u202eb\\u0000c\\u009bd")',
    );
    expect(formatInvalidRow(problem as InvalidRow)).toBe(`row 1 (id "x\\u202ey"): title ${problem?.reason}`);
  });

  it('keeps what is text: tabs and line breaks between a summary’s sentences, the direction marks, other scripts', () => {
    const title = 'خطة \u200Fالجري\u200E 5K';
    const summary = 'Walk.\tRun.\r\nRest a day.\u2028Again.';
    const report = validateRows([row({ title, summary })], links);
    expect(report.invalid).toEqual([]);
    expect(report.plans[0]).toMatchObject({ title, summary });
  });

  it('accepts a title and a summary of exactly the limit, after trimming', () => {
    const title = `${'T'.repeat(TITLE_MAX_LENGTH)}   `;
    const summary = 'é'.repeat(SUMMARY_MAX_LENGTH);
    const report = validateRows([row({ title, summary })], links);
    expect(report.invalid).toEqual([]);
    expect(report.plans[0]).toMatchObject({ title: title.trim(), summary });
  });

  it('reports a value of any size or depth without serialising it, and cuts a huge id', () => {
    let deep: unknown = [];
    for (let depth = 0; depth < 200_000; depth += 1) deep = [deep];
    const id = `${'x'.repeat(70_000)}\n`;
    const report = validateRows(
      [row({ id, title: deep, summary: { nested: deep }, weeks_count: 10n ** 30n })],
      links,
    );
    expect(report.invalid).toEqual([
      {
        row: 1,
        id: `${'x'.repeat(77)}...`,
        field: 'id',
        reason: `must be a UUID (got "${'x'.repeat(76)}...)`,
      },
      { row: 1, id: `${'x'.repeat(77)}...`, field: 'title', reason: 'must be a string (got an array)' },
      {
        row: 1,
        id: `${'x'.repeat(77)}...`,
        field: 'summary',
        reason: 'must be a string or null (got an object)',
      },
      {
        row: 1,
        id: `${'x'.repeat(77)}...`,
        field: 'weeks_count',
        reason: 'must be an integer ≥ 1 (got 1000000000000000000000000000000)',
      },
    ]);
  });

  it('reports every broken rule of a row, not only the first', () => {
    const fields = problemsOf(row({ title: '', level: 'pro', weeks_count: -1 })).map((p) => p.field);
    expect(fields).toEqual(['title', 'level', 'weeks_count']);
  });

  it('rejects both rows that share an id, compared in lowercase', () => {
    const upper = row({ id: '0B6E8A8E-6C1E-4B8E-9A4E-6F7C3F1D2A10', title: 'Other' });
    const other = row({ id: '2b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10' });
    const report = validateRows([row(), other, upper], links);
    expect(report.plans.map((p) => p.id)).toEqual(['2b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10']);
    expect(report.invalid).toEqual([
      {
        row: 1,
        id: '0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10',
        field: 'id',
        reason: 'is duplicated (also in row 3)',
      },
      {
        row: 3,
        id: '0B6E8A8E-6C1E-4B8E-9A4E-6F7C3F1D2A10',
        field: 'id',
        reason: 'is duplicated (also in row 1)',
      },
    ]);
  });

  it('finds duplicates across batches', () => {
    const validator = new RowValidator(links);
    validator.add([row()]);
    validator.add([row({ title: 'Again' })]);
    const report = validator.finish();
    expect(report.plans).toEqual([]);
    expect(report.invalid.map((p) => p.row)).toEqual([1, 2]);
  });

  it('throws a source error for an element that is not an object', () => {
    expect(() => validateRows([row(), 'not a row'], links)).toThrow(SourceRowError);
    expect(() => validateRows([row(), [1, 2]], links)).toThrow('row 2 is not an object (got an array)');
    expect(() => validateRows([null], links)).toThrow('row 1 is not an object (got null)');
  });
});

describe('the invalid fixtures', () => {
  const cases: [string, string][] = [
    ['id-missing', 'id'],
    ['id-not-uuid', 'id'],
    ['title-empty', 'title'],
    ['title-missing', 'title'],
    ['title-too-long', 'title'],
    ['title-control-character', 'title'],
    ['title-bidi-control', 'title'],
    ['summary-not-string', 'summary'],
    ['summary-too-long', 'summary'],
    ['summary-control-character', 'summary'],
    ['summary-bidi-control', 'summary'],
    ['cover-url-not-https', 'cover_url'],
    ['cover-url-not-absolute', 'cover_url'],
    ['level-unknown', 'level'],
    ['level-wrong-case', 'level'],
    ['discipline-unknown', 'discipline'],
    ['discipline-missing', 'discipline'],
    ['weeks-count-zero', 'weeks_count'],
    ['weeks-count-not-integer', 'weeks_count'],
    ['weeks-count-missing', 'weeks_count'],
    ['days-per-week-out-of-range', 'days_per_week'],
    ['est-minutes-zero', 'est_minutes_per_session'],
    ['est-minutes-fraction', 'est_minutes_per_session'],
    ['published-not-boolean', 'published'],
    ['approved-not-boolean', 'approved'],
  ];
  it.each(cases)('%s.json breaks exactly the %s rule of its second row', (name, field) => {
    const rows = JSON.parse(readFileSync(`${ROOT}/fixtures/invalid/${name}.json`, 'utf8')) as unknown[];
    const report = validateRows(rows, DEFAULT_LINKS);
    expect(report.invalid.map((p) => [p.row, p.field])).toEqual([[2, field]]);
    expect(report.plans).toHaveLength(1);
  });

  it('id-duplicate.json makes both rows invalid', () => {
    const rows = JSON.parse(readFileSync(`${ROOT}/fixtures/invalid/id-duplicate.json`, 'utf8')) as unknown[];
    expect(validateRows(rows, DEFAULT_LINKS).invalid.map((p) => [p.row, p.field])).toEqual([
      [1, 'id'],
      [2, 'id'],
    ]);
  });
});

describe('cover URLs', () => {
  it('are published as valid URIs: non-ASCII characters percent-encoded, the host lowercased', () => {
    const { plans } = validateRows(
      [row({ cover_url: ' https://Images.Example.com/covers/élan strength.jpg ' })],
      links,
    );
    expect(plans[0]?.coverUrl).toBe('https://images.example.com/covers/%C3%A9lan%20strength.jpg');
  });
});
