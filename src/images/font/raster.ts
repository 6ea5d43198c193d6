/**
 * Anti-aliased fill of closed outlines by signed-area accumulation (the approach of font-rs and stb_truetype):
 * every edge adds, to each pixel it crosses, the exact area it covers, signed by its direction; a running sum
 * along each row then gives the coverage. Overlapping contours with the same winding add up and are clamped,
 * which is the non-zero rule TrueType outlines use. Edges outside the canvas are clipped: above or below by
 * skipping rows, left or right by clamping x, which keeps every row's sum correct.
 */
export class CoverageCanvas {
  /** Per-row accumulation, with one spare column for contributions at x = width. */
  private readonly cells: Float32Array;
  private readonly stride: number;
  readonly width: number;
  readonly height: number;

  constructor(width: number, height: number) {
    this.width = width;
    this.height = height;
    this.stride = width + 2;
    this.cells = new Float32Array(this.stride * height);
  }

  line(ax: number, ay: number, bx: number, by: number): void {
    if (ay === by) return;
    const dir = ay < by ? 1 : -1;
    const [x0, y0, x1, y1] = ay < by ? [ax, ay, bx, by] : [bx, by, ax, ay];
    const dxdy = (x1 - x0) / (y1 - y0);
    const rowEnd = Math.min(this.height, Math.ceil(y1));
    for (let row = Math.max(0, Math.floor(y0)); row < rowEnd; row++) {
      const top = Math.max(row, y0);
      const bottom = Math.min(row + 1, y1);
      const height = (bottom - top) * dir;
      const xa = this.clampX(x0 + (top - y0) * dxdy);
      const xb = this.clampX(x0 + (bottom - y0) * dxdy);
      this.span(row * this.stride, Math.min(xa, xb), Math.max(xa, xb), height);
    }
  }

  /** A quadratic Bézier, flattened into lines fine enough that the error stays under ~1/8 px. */
  quad(ax: number, ay: number, cx: number, cy: number, bx: number, by: number): void {
    const deviation = Math.hypot(ax - 2 * cx + bx, ay - 2 * cy + by);
    const steps = Math.max(1, Math.ceil(Math.sqrt(deviation * 2)));
    let px = ax;
    let py = ay;
    for (let i = 1; i <= steps; i++) {
      const t = i / steps;
      const u = 1 - t;
      const x = u * u * ax + 2 * u * t * cx + t * t * bx;
      const y = u * u * ay + 2 * u * t * cy + t * t * by;
      this.line(px, py, x, y);
      px = x;
      py = y;
    }
  }

  /** Coverage 0–1 of each pixel of one row, into `out` (length ≥ width). */
  rowCoverage(row: number, out: Float32Array): void {
    let sum = 0;
    const from = row * this.stride;
    for (let col = 0; col < this.width; col++) {
      sum += this.cells[from + col]!;
      out[col] = Math.min(1, Math.abs(sum));
    }
  }

  /** Clears the canvas for the next drawing. */
  clear(): void {
    this.cells.fill(0);
  }

  private clampX(x: number): number {
    return x < 0 ? 0 : Math.min(x, this.width);
  }

  /** Adds the area of one edge piece crossing a single row, between x0 ≤ x1, `height` signed. */
  private span(rowStart: number, x0: number, x1: number, height: number): void {
    const c = this.cells;
    const i0 = Math.floor(x0);
    if (x1 - i0 <= 1) {
      // Within one column: the part right of the edge's midpoint is covered here, the rest carries over.
      const mid = (x0 + x1) / 2 - i0;
      c[rowStart + i0] = c[rowStart + i0]! + height * (1 - mid);
      c[rowStart + i0 + 1] = c[rowStart + i0 + 1]! + height * mid;
      return;
    }
    // Across several columns: the coverage ramps linearly from x0 to x1 (area under a sloped edge).
    const slope = 1 / (x1 - x0);
    const i1 = Math.ceil(x1);
    const f0 = x0 - i0;
    const first = 0.5 * slope * (1 - f0) * (1 - f0);
    const f1 = x1 - (i1 - 1);
    const last = 0.5 * slope * f1 * f1;
    c[rowStart + i0] = c[rowStart + i0]! + height * first;
    if (i1 - i0 === 2) {
      c[rowStart + i0 + 1] = c[rowStart + i0 + 1]! + height * (1 - first - last);
    } else {
      const second = slope * (1.5 - f0);
      c[rowStart + i0 + 1] = c[rowStart + i0 + 1]! + height * (second - first);
      for (let i = i0 + 2; i < i1 - 1; i++) c[rowStart + i] = c[rowStart + i]! + height * slope;
      const beforeLast = second + (i1 - i0 - 3) * slope;
      c[rowStart + i1 - 1] = c[rowStart + i1 - 1]! + height * (1 - beforeLast - last);
    }
    c[rowStart + i1] = c[rowStart + i1]! + height * last;
  }
}
