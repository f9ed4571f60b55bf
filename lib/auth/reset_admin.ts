import { randomToken } from '../shared/crypto.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import { deleteTotp } from '../stores/mfa_store.ts';
import { deleteUserSessions } from '../stores/session_store.ts';
import type { Sql } from '../stores/sql.ts';
import { getUserByEmail, insertUser, updateUser } from '../stores/user_store.ts';
import { hashPassword } from './passwords.ts';

/**
 * The way back in when no administrator can sign in (`npm run admin:reset -- <email>`): the account gets a new
 * generated password (returned, to show once), the admin role and is enabled; its second factor (TOTP and recovery
 * codes) is removed, since a lost phone is one way to be locked out; its sessions end. Created as an
 * admin when it does not exist. Audited as `system:cli`. The bootstrap never does this on its own.
 */
export async function resetAdminAccess(
  sql: Sql,
  email: string,
): Promise<{ email: string; password: string; created: boolean }> {
  const address = email.trim().toLowerCase();
  const password = randomToken(20);
  const passwordHash = await hashPassword(password);
  return sql.begin(async (tx) => {
    const existing = await getUserByEmail(tx, address);
    if (!existing) {
      const user = await insertUser(tx, { email: address, name: null, passwordHash, role: 'admin' });
      await insertAuditEntry(tx, {
        code: null,
        actor: 'system:cli',
        action: 'user.created',
        after: { id: user?.id, email: address, role: 'admin' },
        reason: 'npm run admin:reset',
      });
      return { email: address, password, created: true };
    }
    await updateUser(tx, existing.id, { passwordHash, role: 'admin', disabledAt: null });
    await deleteUserSessions(tx, existing.id);
    await deleteTotp(tx, existing.id);
    await insertAuditEntry(tx, {
      code: null,
      actor: 'system:cli',
      action: 'user.password_reset',
      before: { role: existing.role, disabled: existing.disabledAt !== null },
      after: { id: existing.id, email: address, role: 'admin', disabled: false },
      reason: 'npm run admin:reset',
    });
    return { email: address, password, created: false };
  });
}
