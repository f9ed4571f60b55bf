// Deleting a link: typed confirmation of its code, and a reason.
import { CsrfField, TextField } from '../Field.tsx';
import { useI18n } from '../I18n.tsx';

/** The danger zone of a link's page. */
export function DeleteLinkCard(props: { code: string; csrfToken: string; error?: string | undefined }) {
  const { t } = useI18n();
  return (
    <section class="card danger-zone" aria-labelledby="delete-title">
      <h2 id="delete-title">{t('detail.delete')}</h2>
      <p class="small">{t('detail.deleteLead')}</p>
      <form method="post" action={`/ui/links/${encodeURIComponent(props.code)}/delete`} class="stack">
        <CsrfField token={props.csrfToken} />
        <TextField
          name="confirm"
          id="delete-confirm"
          label={t('detail.deleteConfirm', { code: props.code })}
          required
          dir="ltr"
          error={props.error}
        />
        <TextField name="reason" id="delete-reason" label={t('detail.deleteReason')} dir="auto" />
        <button type="submit" class="btn btn-danger">
          {t('detail.deleteButton')}
        </button>
      </form>
    </section>
  );
}
