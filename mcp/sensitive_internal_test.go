package mcp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// A field a server names like a secret is marked, however the name is
// spelled (pin_code, user_pin, pwd, an access key, a seed phrase, a
// writeOnly field), so that front ends hide what is typed and say that
// the server asks for it; ordinary words that hold such letters are not.
func TestSensitiveFields(t *testing.T) {
	secret := []string{"password", "pwd", "pin_code", "user_pin", "PIN", "aws_access_key", "ssh_key", "session_id",
		"auth", "x_auth_header", "otp", "mnemonic", "seed_phrase", "recovery_code", "card_number", "cvc", "client_secret", "api-key"}
	plain := []string{"name", "author", "hotpot", "classname", "spine", "keyboard", "age"}
	props := map[string]string{}
	for _, n := range append(append([]string{}, secret...), plain...) {
		props[n] = `{"type":"string"}`
	}
	props["note"] = `{"type":"string","writeOnly":true}`
	schema := `{"type":"object","properties":{`
	first := true
	for n, p := range props {
		if !first {
			schema += ","
		}
		first = false
		schema += `"` + n + `":` + p
	}
	schema += "}}"
	got := sensitive(facts.RawJSON(schema))
	for _, n := range append(secret, "note") {
		require.Contains(t, got, n)
	}
	for _, n := range plain {
		require.NotContains(t, got, n)
	}
}
