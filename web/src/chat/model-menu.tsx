// The model switcher in the composer's footer: shows the chat's model and changes it for the
// chat's next messages. Hidden when the owner allows only one.
import { useEffect, useState } from "preact/hooks";
import { useShell } from "../shell/context";
import { chooseModel, chosenModel, knownModels, loadModels, type ModelOption } from "./models";
import { t } from "../i18n";

export function ModelMenu({ chatId }: { chatId: string | null }) {
  const shell = useShell();
  const [models, setModels] = useState<ModelOption[]>(knownModels);
  const [choice, setChoice] = useState<string | undefined>(() => chosenModel(knownModels(), chatId)?.id);

  useEffect(() => {
    if (!shell.viewer) return;
    let live = true;
    void loadModels().then((list) => {
      if (!live) return;
      setModels(list);
      setChoice(chosenModel(list, chatId)?.id);
    });
    return () => {
      live = false;
    };
  }, [shell.viewer, chatId]);

  if (models.length < 2) return null;
  return (
    <label class="chip model-menu" title={t.models.menuTitle}>
      <span class="sr-only">{t.models.menuLabel}</span>
      <select
        aria-label={t.models.menuLabel}
        value={choice}
        onChange={(e) => {
          const id = (e.currentTarget as HTMLSelectElement).value;
          chooseModel(id, chatId);
          setChoice(id);
        }}
      >
        {models.map((m) => (
          <option key={m.id} value={m.id}>
            {m.label}
          </option>
        ))}
      </select>
    </label>
  );
}
