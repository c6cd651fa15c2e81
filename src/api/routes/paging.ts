import type { Static } from '@sinclair/typebox';
import type { PageRequest } from '../../store/index.js';
import { ApiError } from '../errors.js';
import type { PageQuery } from '../schemas/common.js';

/** The cursor query of SPEC "Pagination"; starting_after and ending_before exclude each other. */
export function pageRequest(q: Static<typeof PageQuery>): PageRequest {
  if (q.starting_after !== undefined && q.ending_before !== undefined) {
    throw new ApiError('invalid_request', { param: 'ending_before', message: 'Pass starting_after or ending_before, not both.' });
  }
  return { limit: q.limit ?? 20, startingAfter: q.starting_after, endingBefore: q.ending_before };
}
