package portable

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	script := Checks{GNU: true}
	typed := Checks{GNU: true, Typed: true}
	cases := []struct {
		name   string
		src    string
		checks Checks
		want   string // a part of the one finding expected; "" for none
	}{
		{"associative array", "declare -A pids=()\n", Checks{}, "declare -A"},
		{"associative array in a function", "f() { local -A m; }\n", Checks{}, "local -A"},
		{"indexed array", "declare -a names=()\nlocal -r x=1\n", Checks{}, ""},
		{"nameref", "declare -n ref=x\n", Checks{}, "nameref"},
		{"mapfile", "mapfile -t lines < f\n", Checks{}, "mapfile"},
		{"readarray", "readarray lines < f\n", Checks{}, "readarray"},
		{"while read instead", "while IFS= read -r l; do a+=(\"$l\"); done < f\n", Checks{}, ""},
		{"lower case", "echo \"${x,,}\"\n", Checks{}, "case conversion"},
		{"upper case", "echo ${x^^}\n", Checks{}, "case conversion"},
		{"removal is fine", "echo ${x%%.*} ${x#v}\n", Checks{}, ""},
		{"pipe both", "make |& tee log\n", Checks{}, "|&"},
		{"append both", "make &>> log\n", Checks{}, "&>>"},
		{"negative index", "echo \"${a[-1]}\"\n", Checks{}, "negative array index"},
		{"last element, portably", "echo \"${a[${#a[@]}-1]}\"\n", Checks{}, ""},
		{"wait -n", "wait -n\n", Checks{}, "wait -n"},
		{"wait for a pid", "wait $pid\n", Checks{}, ""},
		{"globstar", "shopt -s globstar\n", Checks{}, "globstar"},
		{"coproc", "coproc cat\n", Checks{}, "coproc"},
		{"case fallthrough", "case $x in a) echo a ;& b) echo b ;; esac\n", Checks{}, "bash 4"},

		{"sed -i", "sed -i 's/a/b/' f\n", script, "sed -i"},
		{"sed -i in a cluster", "sed -Ei 's/a/b/' f\n", script, "sed -Ei"},
		{"sed -i with a suffix", "sed -i.bak 's/a/b/' f\n", script, ""},
		{"sed -r", "sed -r 's/a+/b/' f\n", script, "sed -E"},
		{"sed 0,/re/", "sed -e '0,/x/{/x/d}' f\n", script, "0,/re/"},
		{"sed \\s", "sed 's/\\s*$//' f\n", script, `\s`},
		{"sed alternation", `sed 's/\(a\|b\)/c/' f` + "\n", script, `\|`},
		{"sed -E alternation", "sed -E 's/(a|b)/c/' f\n", script, ""},
		{"grep -P", "grep -oP '\\d+' f\n", script, "grep -P"},
		{"grep -E", "grep -qE 'a|b' f\n", script, ""},
		{"date -d", "date -d yesterday\n", script, "date -d"},
		{"date +%s", "date +%s\n", script, ""},
		{"readlink -f", "readlink -f x\n", script, "readlink -f"},
		{"stat -c", "stat -c %s f\n", script, "stat -c"},
		{"find -printf", "find . -printf '%p\\n'\n", script, "-printf"},
		{"xargs -r", "xargs -r rm\n", script, "xargs -r"},
		{"timeout", "timeout 5 true\n", script, "timeout is not on macOS"},
		{"sha256sum", "sha256sum f\n", script, "sha256sum"},
		{"GNU options allowed", "sed -i 's/a/b/' f\n", Checks{}, ""},

		{"comment", "make demo   # narrated\n", typed, "a comment"},
		{"comment in a script", "make demo   # narrated\n", script, ""},
		{"# in quotes", "echo '# not a comment'\n", typed, ""},
		{"unquoted ?", "curl -s 127.0.0.1:8090/v2.0/networks?name=$NS/x\n", typed, "glob"},
		{"quoted ?", "curl -s \"127.0.0.1:8090/v2.0/networks?name=$NS/x\"\n", typed, ""},
		{"$? is no glob", "echo $?\n", typed, ""},
		{"unquoted [", "kubectl get pods -o jsonpath={.items[0].metadata.name}\n", typed, "glob"},
		{"the test command", "[ -n \"$x\" ] && echo yes\n", typed, ""},
		{"globs allowed in scripts", "curl a?b\n", script, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Check("x.sh", 10, c.src, c.checks)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if len(got) != 0 {
					t.Fatalf("%q: expected no finding, got %v", c.src, got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].What, c.want) {
				t.Fatalf("%q: expected one finding about %q, got %v", c.src, c.want, got)
			}
			if got[0].File != "x.sh" || got[0].Line != 10 {
				t.Errorf("finding at %s:%d, expected x.sh:10 (the first line of the source)", got[0].File, got[0].Line)
			}
		})
	}
}

func TestCheckLineNumbers(t *testing.T) {
	got, err := Check("docs/a.md", 41, "make cluster-up\nexport KUBECONFIG=$(make -s kubeconfig)\nmake demo # x\n", Checks{Typed: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].String() != `docs/a.md:43: a comment in a block to type: zsh, interactively, passes "#" and what follows to the command; say it in the text instead` {
		t.Fatalf("expected the comment at docs/a.md:43, got %v", got)
	}
}

func TestCheckSyntaxError(t *testing.T) {
	_, err := Check("docs/a.md", 7, "if true; then\n", Checks{})
	if err == nil || !strings.Contains(err.Error(), "docs/a.md:7") {
		t.Fatalf("expected a parse error naming docs/a.md:7, got %v", err)
	}
}
