// The pages' one script file (served at /t/{tenant}/passkeys.js, allowed by each page's CSP
// nonce): passkeys, where the browser has WebAuthn with its JSON helpers
// (PublicKeyCredential.parseRequestOptionsFromJSON, credential.toJSON()). It only enhances
// forms that work without it: it fetches the ceremony's options from authd with the form's
// own anti-forgery token, runs the ceremony, and sends the form with the credential in it.
// Without WebAuthn (or JavaScript) its buttons stay hidden and the password forms remain.
export const PASSKEYS_SCRIPT = `'use strict'
;(() => {
  const PKC = window.PublicKeyCredential
  if (!PKC || !PKC.parseRequestOptionsFromJSON || !PKC.parseCreationOptionsFromJSON) return
  for (const note of document.querySelectorAll('[data-passkey-unsupported]')) note.hidden = true

  const options = async (form) => {
    const answer = await fetch(form.dataset.optionsUrl, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _form: form.elements._form.value }),
    })
    if (!answer.ok) throw new Error('options: ' + answer.status)
    return answer.json()
  }
  const send = (form, fields) => {
    for (const [name, value] of Object.entries(fields)) {
      const input = document.createElement('input')
      input.type = 'hidden'
      input.name = name
      input.value = value
      form.append(input)
    }
    form.submit()
  }
  const enable = (form, run) => {
    const button = form.querySelector('button')
    button.hidden = false
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      run().catch(() => send(form, {}))
    })
  }

  // Sign in with a passkey alone: by the button, or offered by the e-mail field's autofill.
  for (const form of document.querySelectorAll('form[data-passkey-signin]')) {
    let autofill = null
    const signIn = async (mediation) => {
      const { challengeId, options: publicKey } = await options(form)
      const credential = await navigator.credentials.get({ publicKey: PKC.parseRequestOptionsFromJSON(publicKey), ...(mediation && { mediation, signal: autofill.signal }) })
      if (credential) send(form, { challengeId, response: JSON.stringify(credential.toJSON()) })
    }
    enable(form, () => {
      if (autofill) autofill.abort()
      return signIn()
    })
    if (PKC.isConditionalMediationAvailable) {
      PKC.isConditionalMediationAvailable().then((available) => {
        if (!available) return
        autofill = new AbortController()
        signIn('conditional').catch(() => {})
      })
    }
  }

  // A passkey as the second factor: the challenge's own options are on the form.
  for (const form of document.querySelectorAll('form[data-passkey-second-factor]')) {
    enable(form, async () => {
      const publicKey = PKC.parseRequestOptionsFromJSON(JSON.parse(form.dataset.options))
      const credential = await navigator.credentials.get({ publicKey })
      send(form, { response: JSON.stringify(credential.toJSON()) })
    })
  }

  // Confirming it is you (step-up, on the account page) with one of your passkeys.
  for (const form of document.querySelectorAll('form[data-passkey-reauthenticate]')) {
    enable(form, async () => {
      const { challengeId, options: publicKey } = await options(form)
      const credential = await navigator.credentials.get({ publicKey: PKC.parseRequestOptionsFromJSON(publicKey) })
      send(form, { challengeId, response: JSON.stringify(credential.toJSON()) })
    })
  }

  // Adding a passkey on the account page.
  for (const form of document.querySelectorAll('form[data-passkey-register]')) {
    enable(form, async () => {
      const { challengeId, options: publicKey } = await options(form)
      const credential = await navigator.credentials.create({ publicKey: PKC.parseCreationOptionsFromJSON(publicKey) })
      send(form, { challengeId, response: JSON.stringify(credential.toJSON()) })
    })
  }
})()
`
