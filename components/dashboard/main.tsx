import { createRoot } from "react-dom/client";
import { Dashboard } from "./Dashboard.tsx";

/** The dashboard bundle's entry. */
createRoot(document.getElementById("root")!).render(<Dashboard />);
