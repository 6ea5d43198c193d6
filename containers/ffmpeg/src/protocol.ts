/**
 * The engine's side of protocol v1. The shapes and constants are the Worker's too and live in one place,
 * @p6/contract/protocol (packages/contract); here only what the engine does with them: job type guard and
 * the typed error model.
 */
import { ERROR_STATUS, type ErrorBody, type ErrorCode, JOB_TYPES, type JobType } from "@p6/contract/protocol";

export * from "@p6/contract/protocol";

export function isJobType(value: string): value is JobType {
  return (JOB_TYPES as readonly string[]).includes(value);
}

/**
 * An error with a public code and a public message. `internal` carries what only the engine log may
 * see (ffmpeg stderr, addresses, paths); it never reaches a response.
 */
export class EngineError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly internal: string | undefined;

  constructor(code: ErrorCode, message: string, options: { field?: string; internal?: string } = {}) {
    super(message);
    this.name = "EngineError";
    this.code = code;
    this.field = options.field;
    this.internal = options.internal;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody(): ErrorBody {
    return this.field === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, field: this.field };
  }
}

export const invalid = (field: string, message: string): EngineError =>
  new EngineError("VALIDATION_INVALID_ARGUMENT", message, { field });

export const unsupported = (message: string, internal?: string): EngineError =>
  new EngineError("CONTENT_TYPE_UNSUPPORTED", message, internal === undefined ? {} : { internal });
