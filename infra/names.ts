/**
 * The names the stack gives its resources: each fits its service's limit for every stack name the settings
 * accept, and no two deployments share one (account-wide names carry the region outside us-east-1: infra/README.md).
 */
import { createHash } from 'node:crypto';
import { type Stack, Token } from 'aws-cdk-lib/core';
import { EDGE_REGION } from '../contract/index.ts';

/** `name` if it has at most `max` characters, else its head and a hash of the whole, keeping its last part. */
export function fitName(name: string, max: number, tail = ''): string {
  const whole = `${name}${tail}`;
  if (whole.length <= max) return whole;
  const hash = createHash('sha256').update(whole).digest('hex').slice(0, 8);
  return `${name.slice(0, max - tail.length - hash.length - 1)}-${hash}${tail}`;
}

/** Whether the stack is in us-east-1, or has no region (its template deploys only there: its region rule). */
export function inEdgeRegion(stack: Stack): boolean {
  return Token.isUnresolved(stack.region) || stack.region === EDGE_REGION;
}

/**
 * The name of an account-wide resource: `<stack>-<what>` in us-east-1, `<stack>_<region>-<what>` elsewhere (no
 * stack name holds `_`, so no other deployment can have it), shortened with a hash to `max` characters.
 */
export function accountWideName(stack: Stack, what: string, max: number): string {
  const region = inEdgeRegion(stack) ? '' : `_${stack.region}`;
  return fitName(`${stack.stackName}${region}`, max, what === '' ? '' : `-${what}`);
}
