/**
 * The engine's side of protocol v1. The wire format is the Worker's too and lives in one place,
 * @p6/contract/wire (packages/contract, zod); here only what the engine does with it: the typed error model.
 */
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from "@p6/contract/wire";

export * from "@p6/contract/wire";

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
