/**
 * `catalog rebuild`: invokes the deployed builder function synchronously and returns its publish summary; a
 * function error, a run that did nothing, or an answer that is not a summary, is a {@link RebuildError}.
 */
import { InvokeCommand, type InvokeCommandOutput, type LambdaClient } from '@aws-sdk/client-lambda';
import { z } from 'zod';
import { CatalogError, describeCause } from '../contract/errors.ts';

export class RebuildError extends CatalogError {
  override name = 'RebuildError';
}

/** The part of a publish summary the command relies on; the rest is printed as the function returned it. */
const SummaryShape = z.looseObject({
  command: z.literal('publish'),
  result: z.enum(['published', 'skipped-identical', 'skipped-pinned']),
  buildId: z.string(),
});

/** A run that did nothing: another run held the lock, or the deployment's source is not set yet. */
const NothingDone = z.looseObject({
  command: z.literal('publish'),
  result: z.enum(['busy', 'not-configured']),
  reason: z.string(),
});

/** What a function error's payload holds. */
const ErrorPayload = z.looseObject({ errorType: z.string().optional(), errorMessage: z.string().optional() });

/** Invokes `functionName` with `event` and waits for it; returns the summary object it answered. */
export async function invokeBuilder(
  client: LambdaClient,
  functionName: string,
  event: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  let answer: InvokeCommandOutput;
  try {
    answer = await client.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'RequestResponse',
        Payload: new TextEncoder().encode(JSON.stringify(event)),
      }),
    );
  } catch (error) {
    throw new RebuildError(`invoking function ${functionName} failed (${describeCause(error)})`, {
      cause: error,
    });
  }
  const text = answer.Payload ? new TextDecoder().decode(answer.Payload) : '';
  let payload: unknown;
  try {
    payload = text === '' ? null : JSON.parse(text);
  } catch {
    payload = text;
  }
  if (answer.FunctionError) {
    const { errorType, errorMessage } = ErrorPayload.safeParse(payload).data ?? {};
    const what = [errorType, errorMessage].filter(Boolean).join(': ') || text.slice(0, 500);
    throw new RebuildError(`function ${functionName} failed (${answer.FunctionError}): ${what}`);
  }
  if (answer.StatusCode !== undefined && answer.StatusCode !== 200)
    throw new RebuildError(`function ${functionName} answered status ${answer.StatusCode}`);
  const idle = NothingDone.safeParse(payload);
  if (idle.success)
    throw new RebuildError(`function ${functionName} did nothing (${idle.data.result}): ${idle.data.reason}`);
  const summary = SummaryShape.safeParse(payload);
  if (!summary.success)
    throw new RebuildError(
      `function ${functionName} answered no publish summary: ${text.slice(0, 500) || '(empty)'}`,
    );
  return summary.data;
}
