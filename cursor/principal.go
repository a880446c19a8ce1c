package cursor

// Principal is the digest of who sent a request, as far as the guard can
// tell: the value of the configured credential header (principal_header,
// "authorization" by default). A tombstone binds a session to the principal
// whose request was refused, so a third party who knows a session ID but not
// its owner's credentials can get its own requests refused, never terminate
// the owner's session (docs/security.md, "Principal binding").
//
// Only the digest is kept, never the value: shared data holds 8 bytes per
// tombstone, and nothing that could be replayed as a credential. Like
// SessionKey it is not a keyed hash: matching an owner's principal needs the
// owner's credential value (or its digest, which only shared data holds, and
// no log prints).
//
// A request without the header, and every request when principal_header is
// "" (off), has NoPrincipal: then whoever knows the session ID is its owner,
// as far as the guard can tell — and, without credentials, as far as the
// upstream can too.
type Principal uint64

// NoPrincipal is the principal of a request without the credential header.
var NoPrincipal = PrincipalOf("")

// PrincipalOf returns the digest of a credential header's value. It uses
// the second lane of KeyOf, so it shares nothing with the session tags that
// logs print (the first 32 bits of the first lane).
func PrincipalOf(value string) Principal {
	return Principal(KeyOf(value).hi())
}
