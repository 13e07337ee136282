/**
 * Custom search attributes of a run. `vigil server` passes them to its dev server; on any other
 * server they are registered once per namespace by someone allowed to (`vigil setup
 * --search-attributes`, or the commands `vigil start` prints when they are missing; a run started
 * without them sets none). They make runs findable in the Temporal UI and `temporal workflow list`,
 * e.g. `VigilStatus = 'paused'`.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA_STATUS = defineSearchAttributeKey('VigilStatus', SearchAttributeType.KEYWORD);
export const SA_ITERATION = defineSearchAttributeKey('VigilIteration', SearchAttributeType.INT);
export const SA_REPO = defineSearchAttributeKey('VigilRepo', SearchAttributeType.KEYWORD);
export const SA_PROVIDER = defineSearchAttributeKey('VigilProvider', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [SA_STATUS, SA_ITERATION, SA_REPO, SA_PROVIDER] as const;

/** `Name=Type` strings as the `temporal server start-dev --search-attribute` flag expects them. */
export const SEARCH_ATTRIBUTE_FLAGS: readonly string[] = SEARCH_ATTRIBUTES.map((k) => {
  const type = {
    KEYWORD: 'Keyword',
    INT: 'Int',
    TEXT: 'Text',
    BOOL: 'Bool',
    DOUBLE: 'Double',
    DATETIME: 'Datetime',
    KEYWORD_LIST: 'KeywordList',
  }[k.type];
  return `${k.name}=${type}`;
});
