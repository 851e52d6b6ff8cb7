// The reader's language, from an Accept-Language header: the first of its languages (by
// q-value, then order) that `available` has, else English. Shared by the pages and the mails,
// so that a page and the mail it causes speak the same language.
export function chooseLanguage(acceptLanguage: string | null | undefined, available: readonly string[]): string {
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';')
      const q = Number(params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined) ?? 1)
      return { language: tag.trim().toLowerCase().split('-')[0]!, q: Number.isFinite(q) ? q : 0, index }
    })
    .filter((entry) => entry.q > 0 && available.includes(entry.language))
    .sort((a, b) => b.q - a.q || a.index - b.index)
  return ranked[0]?.language ?? 'en'
}
