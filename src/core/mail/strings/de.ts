// The German catalogue of the mails (keys: en.ts). Formal address (Sie), as on the pages.
import type { MailCatalogue } from './en'

export const de: MailCatalogue = {
  greeting: 'Hallo {firstName},',
  'greeting.anonymous': 'Hallo,',

  'passwordReset.subject': '{tenant}: Ihr Code zum Zurücksetzen des Passworts',
  'passwordReset.title': '{tenant}: Passwort zurücksetzen',
  'passwordReset.intro': 'Jemand hat darum gebeten, das Passwort Ihres Kontos bei {tenant} zurückzusetzen. Ihr Einmalcode lautet:',
  'passwordReset.validity': 'Er ist {minutes} Minuten lang gültig und kann einmal verwendet werden.',
  'passwordReset.ignore': 'Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Ihr Passwort bleibt, wie es ist.',

  'passwordChanged.subject': '{tenant}: Ihr Passwort wurde geändert',
  'passwordChanged.title': '{tenant}: Passwort geändert',
  'passwordChanged.body': 'Das Passwort Ihres Kontos bei {tenant} wurde am {when} geändert, und alle Sitzungen wurden abgemeldet.',
  'passwordChanged.notYou': 'Wenn Sie das nicht waren, wenden Sie sich sofort an Ihre Administration bei {tenant}.',

  'invitation.subject': '{tenant}: Legen Sie Ihr Passwort fest',
  'invitation.title': 'Willkommen bei {tenant}',
  'invitation.intro': 'Bei {tenant} wurde ein Konto für Sie angelegt. Wählen Sie Ihr Passwort, um es zu nutzen.',
  'invitation.linkLine': 'Legen Sie Ihr Passwort hier fest: {link}',
  'invitation.link': 'Passwort festlegen',
  'invitation.token': 'Ihr Einrichtungs-Token:',
  'invitation.validity': 'Es ist bis {until} gültig und kann einmal verwendet werden.',

  'signupCode.subject': '{tenant}: Ihr Registrierungscode',
  'signupCode.title': '{tenant}: Bestätigen Sie Ihre Adresse',
  'signupCode.intro': 'Jemand möchte mit dieser Adresse ein Konto bei {tenant} anlegen. Um zu bestätigen, dass es Ihre ist, geben Sie diesen Code ein:',
  'signupCode.validity': 'Er ist {minutes} Minuten lang gültig und kann einmal verwendet werden. Nur der neueste Code gilt.',
  'signupCode.ignore': 'Wenn Sie sich nicht registriert haben, ignorieren Sie diese E-Mail: Ohne diesen Code wird kein Konto angelegt.',
  'signupCode.replaced': 'Diese Registrierung, angefordert am {when}, hat eine frühere für diese Adresse ersetzt: Der dafür gesendete Code gilt nicht mehr, nur noch dieser neueste.',
  'signupCode.replacedNotYou': 'Der Code legt das Konto mit dem Passwort an, das bei dieser neuesten Registrierung gewählt wurde. Wenn Sie sie nicht angefordert haben, geben Sie den Code nicht ein: Registrieren Sie sich erneut und verwenden Sie den Code Ihrer eigenen Registrierung.',

  'signupAttempt.subject': '{tenant}: Jemand wollte sich mit Ihrer Adresse registrieren',
  'signupAttempt.title': '{tenant}: Registrierungsversuch',
  'signupAttempt.body': 'Am {when} wollte jemand mit Ihrer Adresse ein Konto bei {tenant} anlegen, doch sie hat bereits eines. Es wurde kein Konto angelegt und nichts geändert.',
  'signupAttempt.advice': 'Wenn Sie es waren, melden Sie sich stattdessen an, oder setzen Sie Ihr Passwort zurück, falls Sie es vergessen haben. Wenn nicht, müssen Sie nichts tun.',

  'mfa.enrolled.subject': '{tenant}: Die Zwei-Faktor-Authentifizierung wurde eingeschaltet',
  'mfa.enrolled.event': 'Am {when} wurde die Zwei-Faktor-Authentifizierung für Ihr Konto bei {tenant} eingeschaltet.',
  'mfa.enrolled.then': 'Ab jetzt fragt die Anmeldung nach einem Code aus Ihrer Authenticator-App.',
  'mfa.disabled.subject': '{tenant}: Die Zwei-Faktor-Authentifizierung wurde ausgeschaltet',
  'mfa.disabled.event': 'Am {when} wurde die Zwei-Faktor-Authentifizierung für Ihr Konto bei {tenant} ausgeschaltet.',
  'mfa.disabled.then': 'Die Anmeldung fragt jetzt nur noch nach Ihrem Passwort.',
  'mfa.reset.subject': '{tenant}: Ihre Zwei-Faktor-Authentifizierung wurde von der Administration entfernt',
  'mfa.reset.event': 'Am {when} hat die Administration die Zwei-Faktor-Authentifizierung Ihres Kontos bei {tenant} entfernt.',
  'mfa.reset.then': 'Die Anmeldung fragt jetzt nur noch nach Ihrem Passwort; Sie können sie wieder einschalten.',
  'mfa.recovery-used.subject': '{tenant}: Ein Wiederherstellungscode wurde zur Anmeldung verwendet',
  'mfa.recovery-used.event': 'Am {when} wurde ein Wiederherstellungscode zur Anmeldung bei Ihrem Konto bei {tenant} verwendet.',
  'mfa.recovery-used.then': 'Sie haben noch {left} Wiederherstellungscodes.',
  'mfa.notYou': 'Wenn Sie das nicht waren, ändern Sie Ihr Passwort und wenden Sie sich sofort an Ihre Administration bei {tenant}.',

  'passkeyAdded.subject': '{tenant}: Ihrem Konto wurde ein Passkey hinzugefügt',
  'passkeyAdded.body': 'Am {when} wurde Ihrem Konto bei {tenant} ein Passkey namens „{passkey}“ hinzugefügt. Er kann Sie ohne Ihr Passwort anmelden.',
  'passkeyAdded.notYou': 'Wenn Sie das nicht waren, entfernen Sie ihn aus den Passkeys Ihres Kontos, ändern Sie Ihr Passwort und wenden Sie sich sofort an Ihre Administration bei {tenant}.',

  'webhookDisabled.subject': '{tenant}: ein Webhook-Endpunkt wurde deaktiviert',
  'webhookDisabled.body': 'Jede Zustellung an den Webhook-Endpunkt {url} ({endpointId}) schlägt seit {since} fehl, daher hat authd ihn deaktiviert: Ereignisse von {tenant} werden nicht mehr dorthin gesendet.',
  'webhookDisabled.advice': 'Sobald der Endpunkt wieder antwortet, aktivieren Sie ihn (authd webhooks update {endpointId} --enable oder über die Admin-API) und senden Sie die gescheiterten Zustellungen mit authd webhooks redeliver erneut.',
}
