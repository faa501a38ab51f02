package mcp

import (
	"io"
	"os/exec"
	"strings"
)

// StartBrowser starts the person's browser command (their $BROWSER; ""
// starts nothing) with the authorization URL u, for LoginOptions.Open,
// and does not wait for it: its output goes to w. The command is the
// person's own environment's, never a settings file's.
func StartBrowser(browser, u string, w io.Writer) error {
	browser = strings.TrimSpace(browser)
	if browser == "" {
		return nil
	}
	c := exec.Command(browser, u)
	c.Stdout, c.Stderr = w, w
	if err := c.Start(); err != nil {
		return err
	}
	go c.Wait()
	return nil
}
