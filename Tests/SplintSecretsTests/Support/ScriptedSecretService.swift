import TestSupport

/// A Secret Service written for the tests, in Python with jeepney, for the paths of the specification that
/// gnome-keyring never takes and the replies it never gives: prompts a person accepts, a delete or a create that
/// asks first, a prompt left up until it is dismissed, and replies that break the specification. Every other test
/// runs against the real gnome-keyring; this one answers only what those paths need.
///
/// It owns `org.freedesktop.secrets` on a session bus of its own (a ``PrivateSession/Setup/noProvider`` session)
/// and encrypts the session as gnome-keyring does (dh-ietf1024-sha256-aes128-cbc-pkcs7, with Python's
/// `cryptography`, which Debian's python3-keyring brings), but in ``Mode/plainOnly``. Each method it is called with
/// is appended to `$XDG_RUNTIME_DIR/scripted.log`.
enum ScriptedSecretService {
  /// How the service behaves.
  enum Mode: String {
    /// Its one collection starts locked, with an item of another service. Unlocking, creating and deleting each
    /// show a prompt, which a person accepts at once.
    case accepting
    /// Creating and deleting show a prompt, which is dismissed. It starts with an item: service `svc`, account
    /// `bob`, secret `kept`.
    case dismissing
    /// Its collection is locked, with the item of ``dismissing``; the unlock prompt stays up until it is dismissed.
    case hanging
    /// Breaks the specification, by service: `empty` lists an unlocked item but gives no secret for it,
    /// `othersession` sends a secret encoded for another session, `badattributes` has Attributes that are not
    /// a dictionary, `badreply` answers SearchItems with the wrong signature, and the two items of `badproperties`
    /// answer GetAll with Attributes that are not a dictionary (and a property the specification does not name);
    /// the collection's Locked is not a boolean.
    case breaking
    /// Offers only the plain session algorithm, as a provider without encryption would: libsecret settles for it
    /// unless told otherwise. It starts with the item of ``dismissing``.
    case plainOnly
    /// Gets the session key wrong, as KWallet before 6.25 does about once in 128 sessions (KDE bug 514194): it refuses
    /// the first key offered (InvalidArgs, "Client public key size is invalid"), and the second session it opens
    /// derives another key than the client, so that what it sends does not decode and what it is sent is refused
    /// ("Can't find session …"); later sessions are right. It starts with the item of ``dismissing``.
    case flakySession
    /// ``flakySession``'s second session every time: no session ever agrees on a key.
    case mismatchedSession
    /// Behaves as oo7-daemon does (GNOME's Rust Secret Service, at its commit 439bee2): its collection starts
    /// locked, with the item of ``dismissing`` and one of service `svc`, account `carol`. While locked, the
    /// collection lists its items in `Items` but searches find none of them (neither unlocked nor locked), and
    /// their Label and Attributes fail with `org.freedesktop.DBus.Error.Failed`. Creating or deleting in it
    /// unlocks it through a prompt; unlocked, both happen at once, and a create replaces only an item whose
    /// attributes equal the new one's after `xdg:content-type` is added. Prompts are accepted. SetSecret changes
    /// the item only in memory: `Restart` (see ``restart``) brings back what creates and deletes wrote. Its
    /// process is named `oo7-daemon`, as the real one is.
    case oo7
    /// ``oo7`` where no prompter can be reached (SSH, CI): Prompt fails with `org.freedesktop.zbus.Error` and no
    /// Completed ever comes.
    case oo7Headless = "oo7headless"
    /// Has no collection at all, as libsecret's `mock-service-empty.py` and a desktop that logs its user in
    /// automatically (no login keyring yet): the `default` alias points nowhere. CreateCollection shows a prompt, which
    /// a person accepts (the new collection, labelled as asked, is where the alias points then).
    case noCollection
    /// ``noCollection`` where the prompt cannot be shown: it completes dismissed, as gnome-keyring's does headless.
    case noCollectionHeadless
  }

  /// An `sh` step that starts the service in `mode` and returns once it owns its name.
  static func start(_ mode: Mode) -> String {
    """
    \(Programs.python) - \(mode.rawValue) >"$XDG_RUNTIME_DIR/scripted.out" 2>&1 <<'PY' &
    \(script)
    PY
    for _ in $(seq 250); do grep -q ready "$XDG_RUNTIME_DIR/scripted.out" 2>/dev/null && exit 0; sleep 0.02; done
    cat "$XDG_RUNTIME_DIR/scripted.out" >&2; exit 1
    """
  }

  /// An `sh` step that locks the collection, as `secret-tool lock` would.
  static let lock = """
    dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
      org.freedesktop.Secret.Service.Lock array:objpath:/org/freedesktop/secrets/collection/scripted >/dev/null
    """

  /// An `sh` step that restarts an ``Mode/oo7`` service as its daemon restarts at the next login: its items become
  /// what it had written to its keyring file.
  static let restart = """
    dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
      org.freedesktop.Secret.Service.Restart >/dev/null
    """

  /// An `sh` step that has the service send the signals of collections coming and going (CollectionCreated,
  /// CollectionChanged, CollectionDeleted), as gnome-keyring does when one is created, locked or deleted. Its
  /// properties list no collections, as a provider's may not yet.
  static let announce = """
    dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
      org.freedesktop.Secret.Service.Announce >/dev/null
    """

  /// An `sh` step that succeeds when the service has been called with `method` exactly `count` times, waiting up to
  /// two seconds for calls still on their way (a dismissal is sent without waiting for its reply).
  static func called(_ method: String, times count: Int) -> String {
    """
    for _ in $(seq 100); do
      [ "$(grep -cx '\(method)' "$XDG_RUNTIME_DIR/scripted.log")" = \(count) ] && exit 0; sleep 0.02
    done; exit 1
    """
  }

  private static let script = """
    import hashlib, hmac, os, sys
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_return, new_signal
    from jeepney.bus_messages import message_bus
    from jeepney.io.blocking import open_dbus_connection

    mode = sys.argv[1]
    if mode in ('oo7', 'oo7headless'):
        import ctypes
        ctypes.CDLL(None).prctl(15, b'oo7-daemon', 0, 0, 0)  # PR_SET_NAME: /proc/PID/comm, as the real daemon's
    log = open(os.environ['XDG_RUNTIME_DIR'] + '/scripted.log', 'a', buffering=1)
    ROOT = '/org/freedesktop/secrets'
    COLLECTION = ROOT + '/collection/scripted'
    SESSION = ROOT + '/session/1'
    ITEM = 'org.freedesktop.Secret.Item.'
    items = {}
    oo7 = mode in ('oo7', 'oo7headless')
    state = {'locked': mode in ('accepting', 'hanging') or oo7, 'next': 0,
             'collection': None if mode.startswith('noCollection') else COLLECTION}
    prompts = {}

    def new_path(kind):
        state['next'] += 1
        return '%s/%s%d' % (COLLECTION if kind == 'item' else ROOT + '/prompt', kind, state['next'])

    def add(service, account, secret):
        attributes = {'service': service, 'username': account}
        if oo7:
            attributes['xdg:content-type'] = 'text/plain'
        items[new_path('item')] = {'attributes': attributes, 'secret': secret}

    if mode in ('dismissing', 'hanging', 'plainOnly', 'flakySession', 'mismatchedSession') or oo7:
        add('svc', 'bob', b'kept')
    if oo7:
        add('svc', 'carol', b'c')
    # What oo7-daemon wrote to its keyring file: creates and deletes write it, SetSecret does not.
    disk = {path: dict(item) for path, item in items.items()}

    def create(attributes, secret):
        for path in [p for p, i in items.items() if i['attributes'] == attributes]:
            del items[path]
            disk.pop(path, None)
        path = new_path('item')
        items[path] = {'attributes': attributes, 'secret': secret}
        disk[path] = dict(items[path])
        return path

    def delete(path):
        del items[path]
        disk.pop(path, None)
    if mode == 'accepting':
        add('other', 'carol', b'x')
    if mode == 'breaking':
        for service in ('empty', 'othersession', 'badattributes', 'badreply', 'badproperties', 'badproperties'):
            add(service, 'alice', b'x')

    def matching(query):
        return [p for p, i in items.items() if all(i['attributes'].get(k) == v for k, v in query.items())]

    def prompt(action):
        path = new_path('p')
        prompts[path] = action
        return path

    # The session: dh-ietf1024-sha256-aes128-cbc-pkcs7 (the Secret Service specification), 1024-bit MODP group 2 of
    # RFC 2409, the shared secret (128 bytes, big-endian) through HKDF-SHA256 with no salt or info to an AES-128 key.
    PRIME = int('FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF95'
                '19B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A'
                '899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF', 16)
    crypto = {'key': None, 'sessions': 0, 'mismatched': False}

    def agree(theirs):
        private = int.from_bytes(os.urandom(128), 'big') % (PRIME - 2) + 1
        shared = pow(int.from_bytes(bytes(theirs), 'big'), private, PRIME).to_bytes(128, 'big')
        extracted = hmac.new(b'\\0' * 32, shared, hashlib.sha256).digest()
        crypto['key'] = hmac.new(extracted, b'\\1', hashlib.sha256).digest()[:16]
        return pow(2, private, PRIME).to_bytes(128, 'big')

    def seal(secret):
        if crypto['mismatched']:
            return os.urandom(16), os.urandom(15)  # not a whole AES block: no key decrypts it
        if crypto['key'] is None:
            return b'', secret
        iv = os.urandom(16)
        padder = padding.PKCS7(128).padder()
        encryptor = Cipher(algorithms.AES(crypto['key']), modes.CBC(iv)).encryptor()
        return iv, encryptor.update(padder.update(secret) + padder.finalize()) + encryptor.finalize()

    def unseal(value):
        if crypto['key'] is None:
            return bytes(value[2])
        decryptor = Cipher(algorithms.AES(crypto['key']), modes.CBC(bytes(value[1]))).decryptor()
        unpadder = padding.PKCS7(128).unpadder()
        return unpadder.update(decryptor.update(bytes(value[2])) + decryptor.finalize()) + unpadder.finalize()

    def complete(bus, path, dismissed, result):
        signal = new_signal(DBusAddress(path, interface='org.freedesktop.Secret.Prompt'), 'Completed', 'bv',
                            (dismissed, result))
        bus.send(signal)

    with open_dbus_connection(bus='SESSION') as bus:
        bus.send_and_get_reply(message_bus.RequestName('org.freedesktop.secrets'))
        print('ready', flush=True)
        while True:
            msg = bus.receive()
            if msg.header.message_type != MessageType.method_call:
                continue
            fields = msg.header.fields
            path, member, body = fields[HeaderFields.path], fields[HeaderFields.member], msg.body
            log.write(member + '\\n')
            reply = lambda signature='', values=(): bus.send(new_method_return(msg, signature, values))
            fail = lambda name, text: bus.send(new_error(msg, name, 's', (text,)))
            if member == 'GetAll' and path in items:
                attributes = items[path]['attributes']
                bad = attributes['service'] == 'badproperties'
                reply('a{sv}', ({'Label': ('s', 'label'), 'Created': ('t', 1), 'Modified': ('t', 2),
                                 'Locked': ('b', state['locked']), 'Type': ('s', 'extra'),
                                 'Attributes': ('s', 'no') if bad else ('a{ss}', attributes)},))
            elif member == 'GetAll':
                reply('a{sv}', ({},))
            elif member == 'OpenSession':
                if body[0] == 'plain':
                    crypto['key'] = None
                    reply('vo', (('s', ''), SESSION))
                elif body[0] == 'dh-ietf1024-sha256-aes128-cbc-pkcs7' and mode != 'plainOnly':
                    crypto['sessions'] += 1
                    if mode == 'flakySession' and crypto['sessions'] == 1:
                        fail('org.freedesktop.DBus.Error.InvalidArgs', 'Client public key size is invalid')
                        continue
                    crypto['mismatched'] = mode == 'mismatchedSession' or (
                        mode == 'flakySession' and crypto['sessions'] == 2)
                    reply('vo', (('ay', agree(body[1][1])), SESSION))
                else:
                    fail('org.freedesktop.DBus.Error.NotSupported', 'not offered: ' + body[0])
            elif member == 'SearchItems':
                found = matching(body[0])
                if body[0].get('service') == 'badreply':
                    reply('ao', (found,))
                elif oo7 and state['locked']:
                    reply('aoao', ([], []))
                elif state['locked']:
                    reply('aoao', ([], found))
                else:
                    reply('aoao', (found, []))
            elif member == 'GetSecrets':
                secrets = {}
                for item in body[0]:
                    service = items[item]['attributes']['service']
                    session = ROOT + '/session/other' if service == 'othersession' else body[1]
                    if not state['locked'] and service != 'empty':
                        secrets[item] = (session, *seal(items[item]['secret']), 'text/plain')
                reply('a{o(oayays)}', (secrets,))
            elif member == 'Unlock':
                if not state['locked']:
                    reply('aoo', (body[0], '/'))
                else:
                    reply('aoo', ([], prompt(('unlock', body[0]))))
            elif member == 'Lock':
                state['locked'] = True
                reply('aoo', (body[0], '/'))
            elif member == 'Prompt' and mode == 'oo7headless':
                fail('org.freedesktop.zbus.Error', 'org.freedesktop.DBus.Error.Failed: CLI prompter failed')
            elif member == 'Prompt':
                reply()
                kind, argument = prompts[path]
                if mode == 'hanging':
                    continue
                if mode in ('dismissing', 'noCollectionHeadless'):
                    complete(bus, path, True, ('s', ''))
                elif kind == 'create-collection':
                    state['collection'] = COLLECTION
                    log.write('collection ' + argument + '\\n')
                    complete(bus, path, False, ('o', COLLECTION))
                elif kind == 'unlock':
                    state['locked'] = False
                    complete(bus, path, False, ('ao', argument))
                elif kind == 'delete':
                    state['locked'] = False
                    delete(argument)
                    complete(bus, path, False, ('s', ''))
                elif kind == 'unlock-create':
                    state['locked'] = False
                    complete(bus, path, False, ('o', create(*argument)))
                else:
                    attributes, secret = argument
                    item = new_path('item')
                    items[item] = {'attributes': attributes, 'secret': secret}
                    complete(bus, path, False, ('o', item))
            elif member == 'Announce':
                service = DBusAddress(ROOT, interface='org.freedesktop.Secret.Service')
                for signal in ('CollectionCreated', 'CollectionChanged', 'CollectionDeleted'):
                    bus.send(new_signal(service, signal, 'o', (ROOT + '/collection/announced',)))
                reply()
            elif member == 'Dismiss':
                reply()
                complete(bus, path, True, ('s', ''))
            elif member == 'ReadAlias':
                reply('o', (state['collection'] or '/',))
            elif member == 'CreateCollection':
                label = body[0]['org.freedesktop.Secret.Collection.Label'][1]
                reply('oo', ('/', prompt(('create-collection', label + ' as ' + body[1]))))
            elif member == 'Get':
                if oo7 and state['locked'] and body[1] in ('Label', 'Attributes', 'Created', 'Modified'):
                    fail('org.freedesktop.DBus.Error.Failed', 'Cannot get attributes of a locked object')
                elif body[1] == 'Locked':
                    reply('v', (('s', 'no') if mode == 'breaking' else ('b', state['locked']),))
                elif body[1] == 'Collections':
                    reply('v', (('ao', [c for c in [state['collection']] if c]),))
                elif body[1] == 'Label':
                    reply('v', (('s', 'label of ' + items[path]['attributes']['username']),))
                elif body[1] == 'Items':
                    reply('v', (('ao', list(items)),))
                elif items[path]['attributes']['service'] == 'badattributes':
                    reply('v', (('s', 'not a dictionary'),))
                else:
                    reply('v', (('a{ss}', items[path]['attributes']),))
            elif member == 'Set':
                reply()
            elif member == 'CreateItem' and oo7:
                attributes = body[0][ITEM + 'Attributes'][1]
                attributes = dict(attributes)
                attributes.setdefault('xdg:content-type', body[1][3])
                if state['locked']:
                    reply('oo', ('/', prompt(('unlock-create', (attributes, unseal(body[1]))))))
                else:
                    reply('oo', (create(attributes, unseal(body[1])), '/'))
            elif member in ('CreateItem', 'SetSecret') and crypto['mismatched']:
                fail('org.freedesktop.DBus.Error.UnknownObject', "Can't find session " + SESSION)
            elif member == 'CreateItem':
                if state['locked']:
                    fail('org.freedesktop.Secret.Error.IsLocked', 'Cannot create an item in a locked collection')
                else:
                    attributes = body[0][ITEM + 'Attributes'][1]
                    reply('oo', ('/', prompt(('create', (attributes, unseal(body[1]))))))
            elif member == 'SetSecret':
                items[path]['secret'] = unseal(body[0])
                reply()
            elif member == 'Delete' and oo7 and not state['locked']:
                delete(path)
                reply('o', ('/',))
            elif member == 'Delete':
                reply('o', (prompt(('delete', path)),))
            elif member == 'Restart':
                items.clear()
                items.update({p: dict(i) for p, i in disk.items()})
                reply()
            else:
                fail('org.freedesktop.DBus.Error.UnknownMethod', 'not scripted: ' + member)
    """
}
