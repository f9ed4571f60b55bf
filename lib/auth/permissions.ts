// Who may do what: the one table of roles and API-key scopes against permissions (docs/adr/0084-staff-identity.md).
// Every route names the permission it needs in routes/route_rules.ts; routes/middleware/authorize.ts asks here.
import type { ApiKeyScope } from '../stores/api_key_store.ts';
import { USER_ROLE_NAMES, type UserRole } from '../stores/user_store.ts';

export const USER_ROLES = USER_ROLE_NAMES;
export type { UserRole };

/**
 * What a route may need. `links:read`: see links, stats, exports; `links:write`: create, edit, delete, retarget
 * one link; `moderation`: reader reports and the blocklist; `admin`: users, keys, operations, settings of the
 * whole service.
 */
export const PERMISSIONS = ['links:read', 'links:write', 'moderation', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The permissions of each role. Editors and admins keep exactly what they could do before there were four. */
export const ROLE_PERMISSIONS: Readonly<Record<UserRole, readonly Permission[]>> = {
  viewer: ['links:read'],
  editor: ['links:read', 'links:write'],
  moderator: ['links:read', 'links:write', 'moderation'],
  admin: ['links:read', 'links:write', 'moderation', 'admin'],
};

/** True when a user with `role` holds `permission`. */
export function roleCan(role: UserRole, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role]?.includes(permission) ?? false;
}

/**
 * True when an API key with `scopes` holds `permission`: a scope grants the permission of its name, and the
 * admin scope every permission (as the admin role does).
 */
export function scopesCan(scopes: readonly (ApiKeyScope | string)[], permission: Permission): boolean {
  return scopes.includes('admin') || scopes.includes(permission);
}
