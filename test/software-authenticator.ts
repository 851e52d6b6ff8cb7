// A small software authenticator for the tests: a P-256 key per credential, attestation "none",
// authenticator data and client data built as a browser and an authenticator would, so the
// server's WebAuthn checks (origin, RP ID, challenge, type, flags, counter, signature) each
// meet a real ceremony, and each can be made to fail on purpose. CBOR by tiny-cbor (the
// library @simplewebauthn/server uses); signatures by node:crypto (ECDSA, DER).
import { encodeCBOR, type CBORType } from '@levischuck/tiny-cbor'
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url')
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest()

const FLAG = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 }

export interface SoftwareCredential {
  id: Buffer
  key: KeyObject
  userHandle: string | undefined
  counter: number
}

export interface CeremonyTweaks {
  /** The page's origin as the browser reports it (default: the authenticator's). */
  origin?: string
  /** The RP ID the authenticator hashes (default: the options' rpId, or the authenticator's). */
  rpId?: string
  /** The clientData type (default webauthn.create / webauthn.get). */
  type?: string
  /** Whether the user was verified (default: the authenticator's). */
  userVerified?: boolean
  /** The signature counter to report (default: the credential's, plus one). */
  counter?: number
  /** Sign with another key: a bad signature. */
  forgeSignature?: boolean
  /** Another challenge than the options'. */
  challenge?: string
}

export class SoftwareAuthenticator {
  readonly credentials: SoftwareCredential[] = []

  constructor(
    private readonly rpId: string,
    private readonly origin: string,
    private readonly options: { userVerification?: boolean; synced?: boolean; aaguid?: Buffer } = {},
  ) {}

  /** navigator.credentials.create(options) then credential.toJSON(). */
  register(options: { challenge: string; rp: { id?: string }; user: { id: string } }, tweaks: CeremonyTweaks = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const id = randomBytes(32)
    const credential: SoftwareCredential = { id, key: privateKey, userHandle: options.user.id, counter: 0 }
    this.credentials.push(credential)
    const jwk = publicKey.export({ format: 'jwk' })
    const cose = encodeCBOR(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    )
    const idLength = Buffer.alloc(2)
    idLength.writeUInt16BE(id.length)
    const attested = Buffer.concat([this.options.aaguid ?? Buffer.alloc(16), idLength, id, Buffer.from(cose)])
    const authData = this.authenticatorData(tweaks.rpId ?? options.rp.id ?? this.rpId, FLAG.AT, tweaks, 0, attested)
    const clientDataJSON = this.clientData(tweaks.type ?? 'webauthn.create', tweaks.challenge ?? options.challenge, tweaks.origin)
    const attestationObject = encodeCBOR(new Map<string, CBORType>([['fmt', 'none'], ['attStmt', new Map<string, CBORType>()], ['authData', new Uint8Array(authData)]]))
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
    }
  }

  /** navigator.credentials.get(options) then credential.toJSON(), with the first credential the
   *  options allow (or the first of this authenticator's, for a discoverable request). */
  assert(options: { challenge: string; rpId?: string; allowCredentials?: Array<{ id: string }> }, tweaks: CeremonyTweaks & { credential?: SoftwareCredential } = {}) {
    const allowed = options.allowCredentials?.map((c) => c.id)
    const credential = tweaks.credential ?? this.credentials.find((c) => !allowed?.length || allowed.includes(b64url(c.id)))
    if (!credential) throw new Error('no credential of this authenticator is allowed')
    credential.counter = tweaks.counter ?? credential.counter + 1
    const authData = this.authenticatorData(tweaks.rpId ?? options.rpId ?? this.rpId, 0, tweaks, credential.counter)
    const clientDataJSON = this.clientData(tweaks.type ?? 'webauthn.get', tweaks.challenge ?? options.challenge, tweaks.origin)
    const signed = Buffer.concat([authData, sha256(clientDataJSON)])
    const key = tweaks.forgeSignature ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey : credential.key
    const signature = sign('sha256', signed, { key, dsaEncoding: 'der' })
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authData), signature: b64url(signature), userHandle: credential.userHandle },
    }
  }

  private authenticatorData(rpId: string, extraFlags: number, tweaks: CeremonyTweaks, counter: number, attested?: Buffer): Buffer {
    const verified = tweaks.userVerified ?? this.options.userVerification ?? true
    const synced = this.options.synced ? FLAG.BE | FLAG.BS : 0
    const flags = FLAG.UP | (verified ? FLAG.UV : 0) | synced | extraFlags
    const count = Buffer.alloc(4)
    count.writeUInt32BE(counter >>> 0)
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, attested ?? Buffer.alloc(0)])
  }

  private clientData(type: string, challenge: string, origin?: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: origin ?? this.origin, crossOrigin: false }))
  }
}
