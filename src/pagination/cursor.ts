// Pagination cursors: opaque, URL-safe and stateless, so that any instance can continue
// a walk that another began. A cursor carries the query's filters and the sort key of
// the last item it covered, and is signed (HMAC-SHA256, truncated to 128 bits) with a
// secret every instance reads from the database, so it cannot be forged or edited.
// A cursor names its list (endpoint and merit cycle) and is signed together with what the
// key it was issued to may read (its organisation, and the cycles and columns of a
// restricted key: ReadScope's fingerprint), so it is useless to any key that may see
// something else; it does not show the organisation id.
//
// Delta tokens (docs/delta-sync.md, "Tokens and cursors") are signed the same way, under a
// list name of their own: a token is never taken for a cursor, nor a cursor for a token.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../errors.js';

export interface CursorScope {
  readonly endpoint: 'meritCycles' | 'employees' | 'meritCyclesDelta' | 'employeesDelta';
  /** The fingerprint of what the key may read (ReadScope): its organisation at least. */
  readonly reader: string;
  readonly meritCycleId?: string;
}

interface CursorBody {
  /** Format version: a future format can still reject old cursors with a clear 400. */
  v: 1;
  s: string;
  f: unknown;
  a: unknown;
}

// Long enough for any cursor we issue (a few hundred characters), short enough that a
// hostile one costs nothing to refuse.
const MAX_CURSOR_LENGTH = 2_048;
const MAC_BYTES = 16; // 128 bits

export const INVALID_CURSOR =
  'nextCursor is not a valid cursor: pass back the nextCursor of a previous page, unchanged';
export const FOREIGN_CURSOR = 'nextCursor belongs to a different list';
export const INVALID_DELTA_TOKEN =
  'deltaToken is not a valid delta token: pass back the deltaToken of the last page of a delta, unchanged';
export const FOREIGN_DELTA_TOKEN = 'deltaToken belongs to a different delta';
export const CHANGED_FILTERS =
  'The filters differ from those of the query that issued nextCursor: repeat them unchanged, or send only nextCursor (and limit)';

const listOf = (scope: CursorScope) => [scope.endpoint, scope.meritCycleId ?? ''].join(':');
const tokenListOf = (scope: CursorScope) => `token:${listOf(scope)}`;

export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  private mac(payload: string, reader: string): Buffer {
    return createHmac('sha256', this.secret)
      .update(reader)
      .update('\u0000')
      .update(payload)
      .digest()
      .subarray(0, MAC_BYTES);
  }

  encode(scope: CursorScope, filters: unknown, after: unknown): string {
    return this.sign({ v: 1, s: listOf(scope), f: filters, a: after }, scope.reader);
  }

  /**
   * The filters and position a cursor carries. Throws a 400 ApiError when the text is
   * not a cursor we signed, or was issued for another list.
   */
  decode(token: string, scope: CursorScope): { filters: unknown; after: unknown } {
    // Another organisation's or scope's cursor fails here, like a forged one.
    const body = this.verify(token, scope.reader, INVALID_CURSOR);
    if (body.s !== listOf(scope)) throw badRequest(FOREIGN_CURSOR);
    return { filters: body.f, after: body.a };
  }

  /** A delta token of the delta `scope` names, carrying `state`. */
  encodeDeltaToken(scope: CursorScope, state: unknown): string {
    return this.sign({ v: 1, s: tokenListOf(scope), f: state, a: null }, scope.reader);
  }

  /** The state a delta token carries; a 400 ApiError as for cursors. */
  decodeDeltaToken(token: string, scope: CursorScope): unknown {
    const body = this.verify(token, scope.reader, INVALID_DELTA_TOKEN);
    if (body.s !== tokenListOf(scope)) throw badRequest(FOREIGN_DELTA_TOKEN);
    return body.f;
  }

  private sign(body: CursorBody, reader: string): string {
    const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
    return `${payload}.${this.mac(payload, reader).toString('base64url')}`;
  }

  private verify(token: string, reader: string, invalid: string): CursorBody {
    if (token.length > MAX_CURSOR_LENGTH) throw badRequest(invalid);
    const [payload, mac, ...rest] = token.split('.');
    if (!payload || !mac || rest.length > 0) throw badRequest(invalid);
    // Compared as text: base64url decoding is lenient (it skips stray characters and
    // ignores trailing bits), so comparing decoded bytes would accept edited tags.
    const expected = Buffer.from(this.mac(payload, reader).toString('base64url'));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw badRequest(invalid);
    }
    try {
      const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorBody;
      if (body.v !== 1 || typeof body.s !== 'string') throw new Error('unknown cursor version');
      return body;
    } catch {
      throw badRequest(invalid);
    }
  }
}
