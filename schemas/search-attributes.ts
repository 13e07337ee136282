/**
 * Custom search attributes of a run. `vigil server` passes them to its dev server; on any other
 * server they are registered once per namespace by someone allowed to (`vigil setup
 * --search-attributes`, or the commands `vigil start` prints when they are missing; a run started
 * without them sets none). They make runs findable in the Temporal UI and `temporal workflow list`,
 * e.g. `VigilStatus = 'paused'`. `VigilRelease` is the release that started the run (the client's
 * version, stamped at start; a stream carries its run's), which `vigil doctor` and `vigil worker`
 * read against the support window (rules/release-window.ts); the workflow never
 * upserts it. Four Keyword attributes of the ten SQL visibility allows.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA_STATUS = defineSearchAttributeKey('VigilStatus', SearchAttributeType.KEYWORD);
export const SA_ITERATION = defineSearchAttributeKey('VigilIteration', SearchAttributeType.INT);
export const SA_REPO = defineSearchAttributeKey('VigilRepo', SearchAttributeType.KEYWORD);
export const SA_PROVIDER = defineSearchAttributeKey('VigilProvider', SearchAttributeType.KEYWORD);
export const SA_RELEASE = defineSearchAttributeKey('VigilRelease', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [SA_STATUS, SA_ITERATION, SA_REPO, SA_PROVIDER, SA_RELEASE] as const;

/** The attributes the workflow upserts: without all of them, a run starts with none (input `searchAttributes: false`). */
export const UPSERTED_SEARCH_ATTRIBUTES = [SA_STATUS, SA_ITERATION, SA_REPO, SA_PROVIDER] as const;

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
