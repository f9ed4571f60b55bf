import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Operators find a link's workflows in Temporal UI with e.g. `LifelineCode = "9Kx2a"`.
// Registered by `npm start` on the dev server; production clusters register them once (docs/OPERATIONS.md).
export const LinkCodeKey = defineSearchAttributeKey('LifelineCode', SearchAttributeType.KEYWORD);
export const SiteKey = defineSearchAttributeKey('LifelineSite', SearchAttributeType.KEYWORD);
export const PostIdKey = defineSearchAttributeKey('LifelinePostId', SearchAttributeType.KEYWORD);
export const KindKey = defineSearchAttributeKey('LifelineKind', SearchAttributeType.KEYWORD);

/** Every custom search attribute, for registration. */
export const SEARCH_ATTRIBUTE_KEYS = [LinkCodeKey, SiteKey, PostIdKey, KindKey];
