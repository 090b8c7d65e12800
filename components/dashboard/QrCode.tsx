import { encode } from "uqr";

/** A QR code as inline SVG (no image request, nothing for the CSP to allow): dark modules on white. */
export function QrCode({
  text,
  label,
  size = 224,
}: {
  text: string;
  label: string;
  size?: number;
}) {
  const { data, size: modules } = encode(text, { ecc: "M", border: 2 });
  let path = "";
  data.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (dark) path += `M${x} ${y}h1v1h-1z`;
    }),
  );
  return (
    <svg
      role="img"
      aria-label={label}
      viewBox={`0 0 ${modules} ${modules}`}
      width={size}
      height={size}
      shapeRendering="crispEdges"
      className="rounded-lg bg-white"
    >
      <rect width={modules} height={modules} fill="#ffffff" />
      <path d={path} fill="#000000" />
    </svg>
  );
}
