import { DEFAULT_DETAIL, ERROR_CODES, type ErrorCode } from "./codes";

export type FieldError = { code: string; field: string; message: string };

/**
 * The one error type of the service. `detail` is public; `cause` is internal and only logged.
 * Headers (Retry-After, Allow, WWW-Authenticate) travel with the error to the central handler.
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    detail?: string,
    options: { errors?: FieldError[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail ?? DEFAULT_DETAIL[code], { cause: options.cause });
    this.name = "ApiError";
    this.code = code;
    this.detail = detail ?? DEFAULT_DETAIL[code];
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  get status() {
    return ERROR_CODES[this.code].status;
  }

  /** A 400 naming one field. */
  static invalid(field: string, message: string, code = "invalid") {
    return new ApiError("VALIDATION_INVALID_ARGUMENT", message, { errors: [{ code, field, message }] });
  }
}
