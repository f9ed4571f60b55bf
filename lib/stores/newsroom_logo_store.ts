import type { Db } from './sql.ts';

// SQL of newsroom_logo (migration 0124): the newsroom's logo for print QR codes, one row at most.

export interface StoredNewsroomLogo {
  contentType: 'image/png' | 'image/svg+xml';
  bytes: Uint8Array;
  uploadedBy: string;
  uploadedAt: Date;
}

/** The newsroom's logo, or null when none was uploaded. */
export async function getNewsroomLogo(db: Db): Promise<StoredNewsroomLogo | null> {
  const rows = await db<
    { contentType: StoredNewsroomLogo['contentType']; bytes: Buffer; uploadedBy: string; uploadedAt: Date }[]
  >`
    SELECT content_type AS "contentType", bytes, uploaded_by AS "uploadedBy", uploaded_at AS "uploadedAt"
    FROM newsroom_logo WHERE singleton`;
  const row = rows[0];
  return row ? { ...row, bytes: new Uint8Array(row.bytes) } : null;
}

/** Stores the newsroom's logo in place of the one before, in one statement. */
export async function putNewsroomLogo(
  db: Db,
  logo: { contentType: StoredNewsroomLogo['contentType']; bytes: Uint8Array; uploadedBy: string },
): Promise<void> {
  await db`
    INSERT INTO newsroom_logo (singleton, content_type, bytes, uploaded_by)
    VALUES (true, ${logo.contentType}, ${Buffer.from(logo.bytes)}, ${logo.uploadedBy})
    ON CONFLICT (singleton) DO UPDATE SET content_type = EXCLUDED.content_type, bytes = EXCLUDED.bytes,
      uploaded_by = EXCLUDED.uploaded_by, uploaded_at = now()`;
}

/** Removes the newsroom's logo (nothing when none). */
export async function deleteNewsroomLogo(db: Db): Promise<void> {
  await db`DELETE FROM newsroom_logo WHERE singleton`;
}
