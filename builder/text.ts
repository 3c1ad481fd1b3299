/**
 * The characters a title or summary may not hold (docs/decisions.md#source-rows), and how a report quotes text
 * so that a character of the source can neither act on the terminal nor reorder the line it is printed in.
 */

/**
 * The bidirectional embedding, override and isolate characters (U+202A–U+202E, U+2066–U+2069): each changes the
 * direction of the text after it up to its closing character, so one left open reorders whatever a partner's
 * page or app prints after the title. The marks (U+200E, U+200F, U+061C) act on no other character and stay.
 */
const BIDI_CONTROL = '\\u202A-\\u202E\\u2066-\\u2069';

/** Control characters (Unicode's Cc: C0, DEL and C1); a summary may hold tabs and line breaks between sentences. */
const CONTROL = '\\u0000-\\u001F\\u007F-\\u009F';
const CONTROL_BUT_LINES = '\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F';

/** What a title may not hold, and a summary. */
export const TITLE_FORBIDDEN = new RegExp(`[${CONTROL}${BIDI_CONTROL}]`);
export const SUMMARY_FORBIDDEN = new RegExp(`[${CONTROL_BUT_LINES}${BIDI_CONTROL}]`);

const IS_BIDI_CONTROL = new RegExp(`^[${BIDI_CONTROL}]$`);

/** `U+202E`: a character as the reports name it. */
function codePoint(character: string): string {
  return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The rule `text` breaks when it holds a character `forbidden` matches, naming the first such character and its
 * position (1-based, in the trimmed text); undefined when it holds none.
 */
export function forbiddenCharacter(text: string, forbidden: RegExp): string | undefined {
  const found = forbidden.exec(text);
  if (found === null) return undefined;
  const character = found[0];
  const what = IS_BIDI_CONTROL.test(character)
    ? 'a bidirectional embedding, override or isolate character'
    : 'a control character';
  return `must not contain ${what} (${codePoint(character)} at character ${found.index + 1})`;
}

/** What JSON leaves as it is but a terminal acts on (DEL, C1) or a line is reordered by. */
const UNSHOWN = new RegExp(`[\\u007F-\\u009F${BIDI_CONTROL}]`, 'g');

/**
 * `text` as JSON, one line, every character written as itself but those that would act on a terminal or reorder
 * the line (C0 controls as JSON escapes them; DEL, C1 and the bidirectional controls as `\uXXXX`).
 */
export function quotedText(text: string): string {
  return JSON.stringify(text).replace(
    UNSHOWN,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
