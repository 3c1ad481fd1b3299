import { describe, expect, it } from 'vitest';
import {
  BUILD_ID_PATTERN,
  DISCIPLINES,
  PAGE_CSP,
  PAGE_OBJECT_PREFIX,
  PAGE_PATH_PREFIX,
  PAGE_STYLE_HASH,
  PLAN_ID_PATTERN,
  PROBLEMS,
  problemDocument,
  unanchored,
} from './index.ts';

describe('the shared names', () => {
  it.each(Object.entries(PROBLEMS))(
    '%s is a problem document of exactly type, title, status and detail',
    (_, p) => {
      expect(Object.keys(p)).toEqual(['type', 'title', 'status', 'detail']);
      expect(JSON.parse(problemDocument(p))).toEqual({
        type: p.type,
        title: p.title,
        status: p.status,
        detail: p.detail,
      });
      expect(problemDocument(p)).not.toContain('\n');
    },
  );

  it("name the allowed disciplines in the 400's detail, from their one declaration", () => {
    expect(PROBLEMS.invalidDiscipline.detail).toBe(
      `The discipline parameter, when present, must be exactly ${DISCIPLINES.join(' or ')}, once.`,
    );
    for (const discipline of DISCIPLINES) expect(PROBLEMS.invalidDiscipline.detail).toContain(discipline);
  });

  it('give every problem its own stable type', () => {
    const types = Object.values(PROBLEMS).map((p) => p.type);
    expect(new Set(types).size).toBe(types.length);
    for (const type of types) expect(type).toMatch(/^tag:training-plan-catalog,2026:problem:[a-z-]+$/);
  });

  it('accept a plan id in lowercase, as published, and nothing but a UUID', () => {
    expect(PLAN_ID_PATTERN.test('920c4400-79a6-5b26-9ac7-4c18aea7632c')).toBe(true);
    expect(PLAN_ID_PATTERN.test('CBB9BAA8-EE0D-5A5D-8CC0-41D6D9C2FE99'.toLowerCase())).toBe(true);
    for (const id of [
      '',
      '-',
      'x',
      'CBB9BAA8-EE0D-5A5D-8CC0-41D6D9C2FE99',
      '920c4400-79a6-5b26-9ac7-4c18aea7632',
      '920c4400-79a6-5b26-9ac7-4c18aea7632c/',
      '920c440079a65b269ac74c18aea7632c',
    ]) {
      expect(PLAN_ID_PATTERN.test(id), id).toBe(false);
    }
    // A page's key is its path's (the viewer-request function rewrites one to the other).
    expect(`/${PAGE_OBJECT_PREFIX}`).toBe(PAGE_PATH_PREFIX);
    expect(BUILD_ID_PATTERN.test('20261123T133944Z-0c79d57f')).toBe(true);
  });

  it('find an anchored pattern inside a longer text without its anchors, and refuse one not anchored', () => {
    const text = 'rolled back from 20261123T133944Z-0c79d57f to 20261124T080000Z-00000000';
    expect(BUILD_ID_PATTERN.test(text)).toBe(false);
    expect(text.match(unanchored(BUILD_ID_PATTERN, 'g'))).toEqual([
      '20261123T133944Z-0c79d57f',
      '20261124T080000Z-00000000',
    ]);
    expect(unanchored(PLAN_ID_PATTERN).test('plans/920c4400-79a6-5b26-9ac7-4c18aea7632c.html')).toBe(true);
    expect(() => unanchored(/\d+$/)).toThrow('/\\d+$/ is not anchored at both ends');
  });

  it('allow the inline stylesheet of the pages by its hash, and no script', () => {
    expect(PAGE_CSP).toContain(`style-src ${PAGE_STYLE_HASH}`);
    expect(PAGE_CSP).not.toMatch(/script-src|unsafe-inline|unsafe-eval/);
    expect(PAGE_CSP).toMatch(/^default-src 'none';/);
  });
});
