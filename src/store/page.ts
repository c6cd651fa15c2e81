// Keyset pagination on time-ordered ids (src/ids.ts: ORDER BY id is creation order), so a page is
// one index range scan whatever the offset, and cursors are plain ids.

export interface PageRequest {
  limit: number;
  startingAfter?: string;
  endingBefore?: string;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  /** Cursor to continue in the same direction (last id forward, first id backward), null at the end. */
  nextCursor: string | null;
}

/**
 * SQL pieces for a page: `where` (to AND with the caller's filter, using placeholder $n) and `order`.
 * Fetch `limit + 1` rows and pass them to `finishPage`.
 */
export function pageClause(req: PageRequest, placeholder: number): { where: string; order: string; params: unknown[] } {
  if (req.endingBefore !== undefined) return { where: `id < $${placeholder}`, order: 'id DESC', params: [req.endingBefore] };
  if (req.startingAfter !== undefined) return { where: `id > $${placeholder}`, order: 'id ASC', params: [req.startingAfter] };
  return { where: 'TRUE', order: 'id ASC', params: [] };
}

export function finishPage<T extends { id: string }>(req: PageRequest, rows: T[]): Page<T> {
  const hasMore = rows.length > req.limit;
  const items = rows.slice(0, req.limit);
  const backward = req.endingBefore !== undefined;
  if (backward) items.reverse();
  const edge = backward ? items[0] : items[items.length - 1];
  return { items, hasMore, nextCursor: hasMore && edge ? edge.id : null };
}
