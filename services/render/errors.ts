/**
 * A render that did not give an image or positions, with the status and code the HTTP surfaces answer
 * (docs/screenshots.md#screenshots): the API maps it to its error body without knowing the renderer.
 */
export class RenderError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, detail: string, headers: Record<string, string> = {}) {
    super(detail);
    this.name = 'RenderError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}
