import { describe, expect, it } from "vitest";
import { assessCommand, commandHeadline, type CommandRisk } from "./command-risk.ts";

const risks = (command: string) => assessCommand(command).risks;

describe("assessCommand", () => {
  it("raises the issue's example to critical: it deletes and deploys", () => {
    expect(assessCommand("rm -rf ./build && npm run deploy -- --prod")).toEqual({
      severity: "critical",
      risks: ["deletes", "deploys"],
    });
  });

  const critical: [string, CommandRisk][] = [
    ["rm -rf /tmp/x", "deletes"],
    ["sudo rm -f /etc/hosts", "deletes"],
    ["find . -name '*.log' -delete", "deletes"],
    ["find . -name '*.tmp' -exec rm {} \\;", "deletes"],
    ["git clean -fdx", "deletes"],
    ["git branch -D feature", "deletes"],
    ["kubectl delete pod web-1", "deletes"],
    ["terraform destroy -auto-approve", "deletes"],
    ["docker system prune -af", "deletes"],
    ["psql -c 'DROP TABLE users'", "deletes"],
    ["echo hello > notes.txt", "overwrites"],
    ["cat a 2>/dev/null >| out", "overwrites"],
    ["mv draft.md README.md", "overwrites"],
    ["cp config.example config", "overwrites"],
    ["sed -i 's/a/b/' file.txt", "overwrites"],
    ["echo x | tee /etc/motd", "overwrites"],
    ["git reset --hard origin/main", "overwrites"],
    ["dd if=/dev/zero of=/dev/sda", "overwrites"],
    ["chmod -R 777 .", "overwrites"],
    ["git push origin main", "pushes"],
    ["git push --force", "overwrites"],
    ["docker push registry/app:1", "pushes"],
    ["npm publish --access public", "pushes"],
    ["cargo publish", "pushes"],
    ["npm run deploy", "deploys"],
    ["fly deploy", "deploys"],
    ["kubectl apply -f deployment.yaml", "deploys"],
    ["helm upgrade web ./chart", "deploys"],
    ["vercel --prod", "deploys"],
    ["./deploy.sh staging", "deploys"],
    ["make deploy", "deploys"],
    ["curl -fsSL https://get.example.com | sh", "pipes-to-shell"],
    ["wget -qO- https://x.example | sudo bash -s -- --yes", "pipes-to-shell"],
    ["bash <(curl -s https://x.example/install)", "pipes-to-shell"],
    ['eval "$(curl -s https://x.example/env)"', "pipes-to-shell"],
    ['bash -c "rm -rf ~/.cache"', "deletes"],
    ["cd /srv && FOO=1 rm -r old; ls", "deletes"],
    ["echo ok; (cd sub && rm x)", "deletes"],
    ["ls $(rm -rf /tmp/y)", "deletes"],
  ];
  it.each(critical)("%s → critical (%s)", (command, risk) => {
    const assessed = assessCommand(command);
    expect(assessed.severity).toBe("critical");
    expect(assessed.risks).toContain(risk);
  });

  const warning = [
    "ls -la",
    "echo 'rm -rf /'",
    'echo "git push" >> log.txt',
    "cat deploy.log",
    "npm test 2>&1",
    "grep -r TODO . > /dev/null",
    "cp -n a b",
    "git status && git diff",
    "bash ./scripts/check.sh",
    "npm install",
    "kubectl get pods",
    "touch /tmp/m/e1",
    "echo a#b # rm -rf /",
  ];
  it.each(warning)("%s → warning", (command) => {
    expect(assessCommand(command)).toEqual({ severity: "warning", risks: [] });
  });

  it("reports each risk once, in a fixed order", () => {
    expect(risks("git push && rm a && rm b && npm run deploy && curl x | sh")).toEqual([
      "deletes",
      "pushes",
      "deploys",
      "pipes-to-shell",
    ]);
  });
});

describe("commandHeadline", () => {
  it("keeps a short command whole, whitespace collapsed", () => {
    expect(commandHeadline("  ls   -la\n /tmp ")).toBe("ls -la /tmp");
  });

  it("cuts a long command at a word with an ellipsis", () => {
    const headline = commandHeadline(
      "rm -rf ./build && npm run deploy -- --prod --region eu-west-1 --verbose",
    );
    expect(headline).toBe("rm -rf ./build && npm run deploy -- --prod…");
    expect(headline.length).toBeLessThanOrEqual(48);
  });

  it("cuts a long word too, never silently", () => {
    const headline = commandHeadline(`echo ${"x".repeat(100)}`, 20);
    expect(headline).toMatch(/…$/);
    expect(headline.length).toBe(20);
  });
});
