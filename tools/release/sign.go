package main

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"fmt"
	"os"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Signer signs release files the way cosign sign-blob --key does, so that
// cosign verify-blob --key verifies them offline: the signature of the
// file's SHA-256 digest by the key, base64-encoded (cosign's .sig), and
// the public key as a PEM "PUBLIC KEY" block (cosign.pub).
type Signer struct {
	signer signature.Signer
	public []byte // PEM
}

// LoadSigner reads a private key PEM file: a cosign key pair's
// cosign.key (cosign generate-key-pair; ENCRYPTED SIGSTORE PRIVATE KEY),
// decrypted with password, or an unencrypted PKCS#8, EC or PKCS#1 key.
func LoadSigner(keyFile string, password []byte) (*Signer, error) {
	pemBytes, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (a cosign.key needs its password in COSIGN_PASSWORD)", keyFile, err)
	}
	s, err := signature.LoadSigner(priv, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	pub, err := s.PublicKey()
	if err != nil {
		return nil, err
	}
	pubPEM, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		return nil, err
	}
	return &Signer{signer: s, public: pubPEM}, nil
}

// Sign returns the base64 signature of data, as cosign sign-blob writes it
// with --output-signature.
func (s *Signer) Sign(data []byte) ([]byte, error) {
	sig, err := s.signer.SignMessage(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return []byte(base64.StdEncoding.EncodeToString(sig)), nil
}

// PublicKeyPEM returns the key that verifies the signatures.
func (s *Signer) PublicKeyPEM() []byte { return s.public }
