// One line of `authd doctor`'s report: a check, how it stands, and what to do about it.
export interface Finding {
  check: string
  status: 'ok' | 'warn' | 'fail'
  detail: string
  fix?: string
}
